"""The Dask side: connecting to a cluster, and one judge concurrency limit for all of it.

``citecal eval-batch`` starts a :class:`distributed.LocalCluster` (worker
processes, one thread each: the pipeline is CPU-bound Python) or connects to
a running scheduler. The judge's request slots come from one
:class:`distributed.Semaphore` held by the scheduler, so however many workers
run, at most ``judge.concurrency`` requests are in flight against the
endpoint (README "Many reports"). Its leases expire when a worker dies
(``distributed.scheduler.locks.lease-timeout``, 30 s by default), so a killed
worker cannot keep slots forever.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Iterator
from types import TracebackType
from typing import TYPE_CHECKING

from citecal.errors import InputError, ServiceError

if TYPE_CHECKING:
    from distributed import Client, Lock, Semaphore, Variable


LOCAL_CLUSTER_CONFIG: dict[str, object] = {
    # Dask samples every worker thread's stack every 10 ms for its dashboard's
    # profile, and wakes each process 50 times a second to watch its event loop
    # and system load. On CPU-bound Python tasks that is 5-10% of a core per
    # worker (docs/explanation/scale.md, "Worker settings"); citecal reports its own timings,
    # so the local cluster it starts samples rarely and does not profile.
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.admin.tick.interval": "1s",
    "distributed.worker.memory.monitor-interval": "1s",
}
"""Dask settings of the LocalCluster ``citecal eval-batch`` starts (not of a cluster it joins)."""


class ClusterSlots:
    """Picklable factory of request slots limited cluster-wide (``Judge(slots=...)``).

    Each slot first takes one of ``local`` per-run slots (an asyncio
    semaphore, so one report cannot park a crowd of threads on the
    scheduler), then a lease of the cluster-wide semaphore named ``name``.
    Only the name and sizes travel with a task; the semaphore is bound to
    the worker it runs on at first use (it needs the worker's scheduler
    connection and event loop, which refresh its leases). The lease is taken
    in a thread because the judge runs its own event loop, not the worker's.
    """

    def __init__(self, name: str, max_leases: int, local: int) -> None:
        self.name = name
        self.max_leases = max_leases
        self.local = local
        self._semaphore: Semaphore | None = None

    def __getstate__(self) -> tuple[str, int, int]:
        return (self.name, self.max_leases, self.local)

    def __setstate__(self, state: tuple[str, int, int]) -> None:
        self.__init__(*state)  # type: ignore[misc]

    def semaphore(self) -> Semaphore:
        """The cluster semaphore, bound to this worker (call from a task's thread)."""
        if self._semaphore is None:
            from distributed import Semaphore, get_worker

            worker = get_worker()
            self._semaphore = Semaphore(
                max_leases=self.max_leases,
                name=self.name,
                scheduler_rpc=worker.scheduler,
                loop=worker.loop,
            )
        return self._semaphore

    def __call__(self) -> _Slot:
        return _Slot(self.semaphore(), asyncio.Semaphore(self.local))


class _Slot:
    """An async context manager shared by one judge run's requests (stateless per entry)."""

    def __init__(self, semaphore: Semaphore, local: asyncio.Semaphore) -> None:
        self._cluster = semaphore
        self._local = local

    def _release_later(self, acquired: asyncio.Future[bool]) -> None:
        # The waiting coroutine was cancelled but the thread went on and got
        # a lease: give it back, or it would be refreshed (held) forever.
        if not acquired.cancelled() and acquired.exception() is None and acquired.result():
            threading.Thread(target=self._cluster.release, daemon=True).start()

    async def __aenter__(self) -> _Slot:
        await self._local.acquire()
        try:
            acquired = asyncio.get_running_loop().run_in_executor(None, self._cluster.acquire)
            try:
                await asyncio.shield(acquired)
            except asyncio.CancelledError:
                acquired.add_done_callback(self._release_later)
                raise
        except BaseException:
            self._local.release()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            await asyncio.get_running_loop().run_in_executor(None, self._cluster.release)
        finally:
            self._local.release()


class ClusterLedger:
    """One spending ledger for every worker of a batch (README "Security", "Spending cap").

    The state (dollars spent, dollars reserved by requests in flight) is a
    :class:`distributed.Variable` on the scheduler, changed under a
    :class:`distributed.Lock` of the same name, so however many workers judge,
    a request starts only when its estimate fits in what the whole batch has
    left. Like :class:`ClusterSlots`, only the name and the cap travel with a
    task; :meth:`bind` attaches it to the worker from a task's thread.
    Implements :class:`citecal.verify.judge.Ledger`.
    """

    def __init__(self, name: str, cap: float | None) -> None:
        self.name = name
        self.cap = cap
        self._lock: Lock | None = None
        self._state: Variable | None = None

    def __getstate__(self) -> tuple[str, float | None]:
        return (self.name, self.cap)

    def __setstate__(self, state: tuple[str, float | None]) -> None:
        self.__init__(*state)  # type: ignore[misc]

    @classmethod
    def create(cls, client: Client, name: str, cap: float | None) -> ClusterLedger:
        """Register the ledger's state on the scheduler (driver side), nothing spent."""
        from distributed import Variable

        Variable(name, client=client).set({"spent": 0.0, "reserved": 0.0})
        return cls(name, cap)

    def bind(self) -> ClusterLedger:
        """Attach to this worker's scheduler connection (call from a task's thread)."""
        if self._lock is None:
            from distributed import Lock, Variable, get_client, get_worker

            worker = get_worker()
            self._lock = Lock(f"{self.name}-lock", scheduler_rpc=worker.scheduler, loop=worker.loop)
            self._state = Variable(self.name, client=get_client())
        return self

    def _read(self) -> dict[str, float]:
        assert self._state is not None, "ClusterLedger.bind() first"
        return dict(self._state.get())

    def reserve(self, usd: float) -> bool:
        """Hold ``usd`` when the batch's cap has room for it."""
        assert self._lock is not None and self._state is not None, "ClusterLedger.bind() first"
        with self._lock:
            state = self._read()
            if self.cap is not None and state["spent"] + state["reserved"] + usd > self.cap + 1e-12:
                return False
            state["reserved"] += usd
            self._state.set(state)
        return True

    def settle(self, reserved: float, spent: float) -> None:
        """Replace a reservation by what its answer cost."""
        assert self._lock is not None and self._state is not None, "ClusterLedger.bind() first"
        with self._lock:
            state = self._read()
            state["reserved"] = max(0.0, state["reserved"] - reserved)
            state["spent"] += spent
            self._state.set(state)

    def spent(self) -> float:
        """Dollars the whole batch has spent so far."""
        return float(self._read()["spent"])


def drop_ledger(client: Client, ledger: ClusterLedger) -> None:
    """Forget a finished batch's ledger on the scheduler (driver side)."""
    from distributed import Variable

    Variable(ledger.name, client=client).delete()


def judge_slots(client: Client, concurrency: int, name: str) -> tuple[ClusterSlots, Semaphore]:
    """Register a cluster-wide semaphore of ``concurrency`` leases for this batch.

    Returns the slots to send to workers and the driver's handle, to close
    the semaphore when the batch ends.
    """
    from distributed import Semaphore

    semaphore = Semaphore(
        max_leases=concurrency, name=name, scheduler_rpc=client.scheduler, loop=client.loop
    )
    semaphore.register()
    return ClusterSlots(name, concurrency, concurrency), semaphore


def _ignore_interrupt_plugin() -> object:
    """A WorkerPlugin instance (built lazily: ``distributed`` loads only when a batch runs)."""
    from distributed import WorkerPlugin

    class IgnoreInterrupt(_IgnoreInterrupt, WorkerPlugin):  # type: ignore[misc]
        pass

    return IgnoreInterrupt()


class _IgnoreInterrupt:
    """Worker plugin: Ctrl-C belongs to the driver, which shuts the local cluster down.

    A terminal sends SIGINT to every process of the foreground group, worker
    processes included; without this each would die with its own traceback.
    """

    name = "citecal-ignore-sigint"

    def setup(self, worker: object) -> None:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)


_HOST_SCHEMES = ("tcp", "tls", "ws", "wss")


def check_scheduler_address(address: str) -> None:
    """Refuse an address no Dask client could ever connect to, before anything starts.

    ``distributed`` would otherwise try it for ``distributed.comm.timeouts.connect``
    (about a minute, leaving an output directory behind) and print a traceback when
    its client is collected.

    Raises:
        InputError: no ``SCHEME://`` of a Dask comm backend, or no ``HOST:PORT``.
    """
    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.comm.registry import backends

    problem = f"--scheduler {address!r} is not a Dask scheduler address (e.g. tcp://10.0.0.5:8786)"
    try:
        scheme, location = parse_address(address, strict=True)
        if scheme not in backends:
            raise ValueError(scheme)
        if scheme in _HOST_SCHEMES:
            host, port = parse_host_port(location)
            if not host or any(c.isspace() or c in "/?#@" for c in str(host)) or not port:
                raise ValueError(location)
    except ValueError:
        raise InputError(problem) from None


@contextlib.contextmanager
def connect(scheduler: str | None, workers: int | None) -> Iterator[Client]:
    """A client of the scheduler at ``scheduler``, or of a new LocalCluster of ``workers``.

    Raises:
        ServiceError: the scheduler cannot be reached.
    """
    from distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            # Waits up to distributed.comm.timeouts.connect (dask config, 30 s by default).
            client = Client(scheduler, set_as_default=False)
        except (
            OSError,
            ValueError,
        ) as exc:  # TimeoutError is an OSError; a bad address a ValueError
            raise ServiceError(
                f"cannot reach the Dask scheduler at {scheduler}: {str(exc).splitlines()[0]} "
                "(start one with `dask scheduler` and `dask worker ADDRESS`, "
                "or leave out --scheduler for a local cluster)"
            ) from None
        with client:
            yield client
        return
    import dask.config

    # Workers get a copy of the settings when they start, so they only need
    # to hold while the cluster is made.
    with dask.config.set(LOCAL_CLUSTER_CONFIG):
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address="127.0.0.1:0",
            # Errors reach the user through the tasks' results, as one line each
            # (README "Many reports"); a shutdown mid-request (Ctrl-C) would
            # otherwise print the workers' logged tracebacks too.
            silence_logs=logging.CRITICAL,
        )
    with cluster, Client(cluster, set_as_default=False) as client:
        client.register_plugin(_ignore_interrupt_plugin())
        yield client


def dashboard_link(client: Client) -> str | None:
    """The dashboard URL when the scheduler serves one (bokeh installed), else None."""
    services = client.scheduler_info().get("services", {})
    if "dashboard" not in services:
        return None
    link = client.dashboard_link
    return str(link) if link else None
