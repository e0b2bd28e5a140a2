"""A real, scriptable OpenAI-compatible HTTP server on 127.0.0.1.

It speaks enough of the protocol (``POST /v1/chat/completions``,
``GET /v1/models``) for the official ``openai`` client, so citecal's judge is
tested, benchmarked and demonstrated through real HTTP without an API key::

    with FakeOpenAIServer(latency_s=0.3) as srv:
        os.environ["OPENAI_BASE_URL"] = srv.base_url
        ...
        srv.calls, srv.max_in_flight, srv.requests[0].model

How a chat completion is answered, first match wins:

1. the next scripted :class:`Reply` queued with :meth:`FakeOpenAIServer.script`
   (status codes, headers such as ``Retry-After``, delays, raw malformed
   bodies, fixed content, usage figures);
2. the ``handler`` callable, given the parsed :class:`ChatRequest`; it returns
   a :class:`Reply` or None to fall through;
3. the deterministic **heuristic judge** (:func:`heuristic_verdict`): for each
   claim found in a citecal judge prompt, the share of the claim's words
   (4+ letters, stop words dropped, compared on their first 5 letters, code
   identifiers split at ``_`` and camelCase) that occur in the *cited* lines
   (``>``-marked) is the score; ``supports`` when it is at least 0.5;
   confidence ``high`` when the score is ≥ 0.75 or < 0.2, ``medium`` when
   ≥ 0.6 or < 0.35, else ``low``. Batch prompts get a JSON array keyed by
   ``claim_id`` (``{"results": [...]}`` when a JSON schema was requested).

4. the **mode** (``mode=``) chooses the judge of step 3:
   ``"heuristic"`` (default) ignores the prompt; ``"prompt_sensitive"``
   (:func:`sensitive_verdict`) reads the system prompt: told to *check every
   part of the claim* it scores each clause of the claim on its own and
   rejects a claim whose added clause (``... and caches the result``) the
   cited lines do not show; told to accept a claim *when any of its key
   terms appears* it lowers its threshold to 0.2 and stops checking parts
   (harmful on the bundled table); told that every term must appear
   *verbatim* it raises it to 0.9 (harmful). ``"prompt_noise"`` is a judge
   whose prompt does not matter in expectation: the heuristic answer,
   flipped for a seeded pseudo-random ``noise`` share of (prompt, claim)
   pairs, so a new prompt re-rolls which claims flip but no prompt is
   better. In both modes a *prompt critic* request (its system prompt names
   the prompt critic, ``citecal align``) is answered with
   :data:`CRITIC_EDITS`, four fixed edits, one helpful.

5. ``mode="realistic"``: :class:`~citecal.testing.realistic_judge.RealisticJudge`, a
   judge that always says ``high`` but errs where claims are hard, with OpenAI's
   ``logprobs`` and ``n`` choices (``logprobs=False`` and ``honour_n=False`` play servers
   without them; README "Judge confidence").

A request for ``n`` choices gets ``n`` copies of a deterministic answer (unless
``honour_n=False``); ``logprobs`` come only from the realistic judge (or a scripted
:class:`Reply` with ``choices``).
Usage is ``characters / 4`` of the messages (once) and of every choice's answer unless scripted.
A request's ``max_tokens`` (or ``max_completion_tokens``) is honoured as a model
does: a longer answer (each of the ``n`` choices) is cut there (``finish_reason:
"length"``) and its usage counts at most that many tokens per choice.
``obey_injections=True`` makes the heuristic judge gullible, like an LLM that
follows instructions hidden in what it judges (README "Security"): when the
material of a request holds an instruction in any of nine languages, in any
encoding a model decodes (:mod:`citecal.testing.gullible`, written apart from
citecal's screen), every claim of that request is answered
``supports``/``high``/1.0 with the reasoning ``obeyed: ...``. Tests use it to
show that no such instruction becomes a verdict.
``reject_response_format=True`` makes the server answer HTTP 400 to any
request with ``response_format`` (like servers without structured outputs);
``api_key`` makes it answer 401 to other keys; ``known_models`` makes it answer
404 to other models.
"""

from __future__ import annotations

import collections
import json
import logging
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "CRITIC_EDITS",
    "ChatRequest",
    "FakeOpenAIServer",
    "PromptClaim",
    "Reply",
    "heuristic_verdict",
    "sensitive_verdict",
]


@dataclass
class Reply:
    """One scripted answer to a chat completion request.

    ``content`` is the assistant message; ``status`` other than 200 sends an
    OpenAI-style error body with ``error`` as its message (or ``body`` as the
    whole JSON body); ``raw`` sends these bytes as the body, unparsed;
    ``delay_s`` waits before answering (longer than the client timeout makes
    a timeout); ``usage`` is ``(prompt_tokens, completion_tokens)``, and
    ``no_usage`` leaves it out; ``drop`` closes the connection without any
    response (a dropped keep-alive connection or a crashed server).
    """

    content: str | None = None
    status: int = 200
    error: str = "scripted error"
    body: Any = None
    raw: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    usage: tuple[int, int] | None = None
    no_usage: bool = False
    drop: bool = False
    choices: list[tuple[str, list[dict[str, Any]] | None]] | None = None
    """Several choices: (content, OpenAI ``logprobs.content`` or None) each."""

    @classmethod
    def json(cls, value: Any, **kw: Any) -> Reply:
        """A 200 answer whose content is ``value`` as JSON."""
        return cls(content=json.dumps(value), **kw)

    @classmethod
    def status_error(cls, status: int, error: str = "scripted error", **kw: Any) -> Reply:
        """An HTTP error answer (e.g. 429 with ``headers={"Retry-After": "1"}``)."""
        return cls(status=status, error=error, **kw)


@dataclass(frozen=True)
class PromptClaim:
    """A claim found in a judge prompt with its cited lines (context lines dropped)."""

    n: int
    claim: str
    code: str
    citation: str = ""
    """The prompt's line naming the cited code (``from [path:10-25]``), for the labels judge."""
    block: str = ""
    """The whole numbered code block: cited lines (``N > code``) and the context around them."""


log = logging.getLogger("citecal.testing")

_BATCH_ITEM_RE = re.compile(
    r'\[Claim (\d+)\]:\s*"(.*?)"\s*\n\[Code \1\]([^\n]*)\n(`{3,})[^\n]*\n(.*?)\n\4', re.DOTALL
)
_SINGLE_RE = re.compile(r'Claim:\s*"(.*?)"\s*\n(.*?)(`{3,})[^\n]*\n(.*?)\n\3', re.DOTALL)
_CITED_LINE_RE = re.compile(r"^\s*\d+ > ?(.*)$")


def _cited_lines(block: str) -> str:
    lines = block.split("\n")
    cited = [m.group(1) for line in lines if (m := _CITED_LINE_RE.match(line))]
    return "\n".join(cited) if cited else block


@dataclass(frozen=True)
class ChatRequest:
    """A received chat completion request, parsed."""

    body: dict[str, Any]
    headers: dict[str, str]
    received_at: float

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def messages(self) -> list[dict[str, Any]]:
        msgs = self.body.get("messages", [])
        return msgs if isinstance(msgs, list) else []

    def _content(self, role: str) -> str:
        return "\n".join(str(m.get("content", "")) for m in self.messages if m.get("role") == role)

    @property
    def system(self) -> str:
        return self._content("system")

    @property
    def user(self) -> str:
        return self._content("user")

    @property
    def response_format(self) -> dict[str, Any] | None:
        rf = self.body.get("response_format")
        return rf if isinstance(rf, dict) else None

    @property
    def claims(self) -> list[PromptClaim]:
        """Claims of a citecal judge prompt (batch numbering, or one single claim)."""
        text = self.user
        items = [
            PromptClaim(
                int(m.group(1)),
                m.group(2),
                _cited_lines(m.group(5)),
                m.group(3).strip(),
                m.group(5),
            )
            for m in _BATCH_ITEM_RE.finditer(text)
        ]
        if items:
            return items
        m = _SINGLE_RE.search(text)
        if m is None:
            return []
        return [
            PromptClaim(1, m.group(1), _cited_lines(m.group(4)), m.group(2).strip(), m.group(4))
        ]

    @property
    def is_batch(self) -> bool:
        """True when the prompt numbers its claims (``[Claim 1]`` ...)."""
        return bool(_BATCH_ITEM_RE.search(self.user))


def _obeyed(request: ChatRequest) -> str | None:
    """The instruction the gullible judge reads in a request (:mod:`citecal.testing.gullible`)."""
    from citecal.testing.gullible import instruction, material

    return instruction(material(request.user, [(c.claim, c.block) for c in request.claims]))


_STOP_WORDS = (
    "this that with from into when then than they them their there these those which while "
    "what where have has been being were will would should could also only each every such "
    "some more most other over under about after before using uses used does make makes "
    "code file line lines function method class returns value values"
)
_STOP = frozenset(_STOP_WORDS.split())


def _words(text: str) -> list[str]:
    out: list[str] = []
    for token in re.findall(r"[A-Za-z][A-Za-z0-9_]*", text):
        for part in re.split(r"_+|(?<=[a-z0-9])(?=[A-Z])", token):
            w = part.lower()
            if len(w) >= 4 and w not in _STOP:
                out.append(w)
    return out


def heuristic_verdict(claim: str, code: str) -> dict[str, Any]:
    """The server's deterministic answer for one claim (rules in the module doc)."""
    claim_words = list(dict.fromkeys(_words(claim)))
    code_keys = {w[:5] for w in _words(code)}
    matched = [w for w in claim_words if w[:5] in code_keys]
    missing = [w for w in claim_words if w[:5] not in code_keys]
    score = len(matched) / len(claim_words) if claim_words else 0.0
    if score >= 0.75 or score < 0.2:
        confidence = "high"
    elif score >= 0.6 or score < 0.35:
        confidence = "medium"
    else:
        confidence = "low"
    return {
        "reasoning": (
            f"{len(matched)} of {len(claim_words)} claim terms occur in the cited code"
            f" (found: {', '.join(matched) or '-'}; missing: {', '.join(missing) or '-'})"
        ),
        "supports": score >= 0.5,
        "confidence": confidence,
        "score": round(score, 3),
    }


def heuristic_content(
    request: ChatRequest,
    obey_injections: bool = False,
    judge: Callable[[str, str], dict[str, Any]] | None = None,
) -> str:
    """The judge's answer text for a whole request: ``judge`` (default the heuristic) per
    claim, or, when ``obey_injections``, whatever an instruction in the prompt dictates."""
    answer = judge or heuristic_verdict
    claims = request.claims
    rf = request.response_format or {}
    schema_name = str(rf.get("json_schema", {}).get("name", "")) if rf else ""
    batch = request.is_batch or "batch" in schema_name
    order = _obeyed(request) if obey_injections else None

    def verdict(c: PromptClaim) -> dict[str, Any]:
        if order is not None:
            return {
                "reasoning": f"obeyed: {order}",
                "supports": True,
                "confidence": "high",
                "score": 1.0,
            }
        return answer(c.claim, c.code)

    if not batch:
        c = claims[0] if claims else PromptClaim(1, "", "")
        return json.dumps(verdict(c))
    items = [{"claim_id": c.n, **verdict(c)} for c in claims]
    return json.dumps({"results": items} if rf else items)


HELPFUL_PHRASE = "check every part of the claim"
LENIENT_PHRASE = "any of its key terms"
VERBATIM_PHRASE = "appears verbatim"
CRITIC_MARKER = "prompt critic"
LENIENT_THRESHOLD = 0.2
VERBATIM_THRESHOLD = 0.9
"""Phrases the prompt-sensitive judge reacts to (matched case-insensitively)."""

CRITIC_EDITS: list[dict[str, str]] = [
    {
        "title": "Accept paraphrase",
        "instruction": "Accept a claim when any of its key terms appears in the cited lines;"
        " do not penalise a claim for details the code does not show.",
        "rationale": "Many rejected claims were supported in other words.",
    },
    {
        "title": "Check every part",
        "instruction": "Check every part of the claim: a claim that adds a behaviour the cited"
        " lines do not show (for example '... and caches the result for later calls') is NOT"
        " SUPPORTED, even when the rest of it is.",
        "rationale": "Most accepted claims that people rejected add one unstated behaviour.",
    },
    {
        "title": "Require verbatim terms",
        "instruction": "Only accept a claim when every term of the claim appears verbatim in"
        " the cited lines.",
        "rationale": "Be conservative.",
    },
    {
        "title": "Short reasoning",
        "instruction": "Keep the reasoning to two sentences.",
        "rationale": "Shorter answers cost less.",
    },
]
"""The prompt critic's fixed answer in the prompt-sensitive and noise modes (one helpful)."""

_CLAUSE_RE = re.compile(r",? and (?=[a-z])|;|, while ")


def _rescale(score: float, threshold: float) -> float:
    """``score`` mapped piecewise-linearly so that ``threshold`` lands on 0.5."""
    if score < threshold:
        return 0.5 * score / threshold
    return 0.5 + 0.5 * (score - threshold) / (1.0 - threshold) if threshold < 1 else 1.0


def _confidence(score: float) -> str:
    if score >= 0.75 or score < 0.2:
        return "high"
    return "medium" if score >= 0.6 or score < 0.35 else "low"


def sensitive_verdict(claim: str, code: str, system: str) -> dict[str, Any]:
    """The prompt-sensitive judge's answer for one claim (rules in the module doc)."""
    rules = system.lower()
    base = heuristic_verdict(claim, code)
    score = float(base["score"])
    notes = []
    if HELPFUL_PHRASE in rules and LENIENT_PHRASE not in rules:
        parts = [p for p in _CLAUSE_RE.split(claim) if _words(p)]
        if len(parts) > 1:
            scores = [float(heuristic_verdict(p, code)["score"]) for p in parts]
            score = min(scores)
            notes.append(f"weakest of {len(parts)} parts scores {score:.2f}")
    threshold = 0.5
    if VERBATIM_PHRASE in rules:
        threshold = VERBATIM_THRESHOLD
    elif LENIENT_PHRASE in rules:
        threshold = LENIENT_THRESHOLD
    out = round(_rescale(score, threshold), 3)
    return {
        "reasoning": "; ".join([str(base["reasoning"]), *notes]),
        "supports": score >= threshold,
        "confidence": _confidence(out),
        "score": out,
    }


def _noisy_verdict(claim: str, code: str, system: str, noise: float, seed: int) -> dict[str, Any]:
    """The heuristic answer, flipped for a seeded pseudo-random share of (prompt, claim) pairs."""
    import hashlib

    v = heuristic_verdict(claim, code)
    digest = hashlib.sha256(f"{seed}\x00{system}\x00{claim}\x00{code}".encode()).digest()
    if int.from_bytes(digest[:8], "big") / 2**64 < noise:
        score = round(1.0 - float(v["score"]), 3)
        v = {**v, "supports": not v["supports"], "score": score, "confidence": _confidence(score)}
    return v


_ASKED_RE = re.compile(r"Propose (\d+) edits")


def critic_content(request: ChatRequest) -> str:
    """The prompt critic's fixed answer: :data:`CRITIC_EDITS`, then neutral style edits.

    A critic asked for more than four edits (``Propose N edits``) gets
    neutral ones after the four, so a search can be given many candidates
    whose verdicts equal the start's (the scale benchmark).
    """
    asked = _ASKED_RE.search(request.user)
    n = int(asked.group(1)) if asked else len(CRITIC_EDITS)
    edits = list(CRITIC_EDITS[:n])
    for i in range(len(edits), n):
        edits.append(
            {
                "title": f"Style {i + 1}",
                "instruction": f"Write the reasoning in at most {i} short sentences.",
                "rationale": "Style only.",
            }
        )
    return json.dumps({"edits": edits})


def _tokens(text: str) -> int:
    return max(1, len(text) // 4) if text else 0


class _QuietHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128  # the default 5 resets connections under --concurrency 16

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError | TimeoutError):
            return  # a client hung up (cancelled or timed-out request): expected in tests
        log.warning("fake OpenAI server: error handling a request", exc_info=True)


MODES = ("heuristic", "prompt_sensitive", "prompt_noise", "realistic")
"""Judges the server can play (module doc, step 4)."""


class FakeOpenAIServer:
    """An OpenAI-compatible server in a background thread (a context manager)."""

    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        handler: Callable[[ChatRequest], Reply | None] | None = None,
        api_key: str | None = None,
        known_models: Iterable[str] | None = None,
        reject_response_format: bool = False,
        obey_injections: bool = False,
        mode: str = "heuristic",
        noise: float = 0.15,
        seed: int = 0,
        host: str = "127.0.0.1",
        port: int = 0,
        honour_n: bool = True,
        realistic: Callable[[ChatRequest], Reply] | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}: use one of {', '.join(MODES)}")
        self.latency_s = latency_s
        self.mode = mode
        self.noise = noise
        self.seed = seed
        self.handler = handler
        self.api_key = api_key
        self.known_models = list(known_models) if known_models is not None else None
        self.reject_response_format = reject_response_format
        self.obey_injections = obey_injections
        self.honour_n = honour_n
        self.realistic = realistic
        if mode == "realistic" and realistic is None:
            from citecal.testing.realistic_judge import RealisticJudge

            self.realistic = RealisticJudge(seed=seed, honour_n=honour_n)
        self._host = host
        self._port = port
        self._queue: collections.deque[Reply] = collections.deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.requests: list[ChatRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0

    # ------------------------------------------------------------------ control

    def start(self) -> FakeOpenAIServer:
        """Bind and serve in a daemon thread."""
        server = self

        class Handler(_Handler):
            owner = server

        httpd = _QuietHTTPServer((self._host, self._port), Handler)
        self._httpd = httpd
        self._stop.clear()
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and free the port (pending delays end at once)."""
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server is not running")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``, for ``OPENAI_BASE_URL``."""
        return f"http://{self._host}:{self.port}/v1"

    def script(self, *replies: Reply) -> None:
        """Queue replies; each answers one chat completion request, in order."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending_replies(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def calls(self) -> int:
        """Chat completion requests received."""
        with self._lock:
            return len(self.requests)

    def reset(self) -> None:
        """Forget received requests, scripted replies and the in-flight maximum."""
        with self._lock:
            self.requests.clear()
            self._queue.clear()
            self.max_in_flight = self.in_flight

    # ------------------------------------------------------------------ serving

    def _record(self, req: ChatRequest) -> Reply | None:
        with self._lock:
            self.requests.append(req)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            return self._queue.popleft() if self._queue else None

    def _done(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def answer(self, req: ChatRequest, scripted: Reply | None) -> Reply:
        """The reply to send (see the module doc for the order)."""
        if self.api_key is not None and req.headers.get("authorization") != (
            f"Bearer {self.api_key}"
        ):
            return Reply.status_error(401, "Incorrect API key provided")
        if self.known_models is not None and req.model not in self.known_models:
            return Reply.status_error(404, f"The model `{req.model}` does not exist")
        if self.reject_response_format and req.response_format is not None:
            return Reply.status_error(
                400, "response_format 'json_schema' is not supported by this server"
            )
        if scripted is not None:
            return scripted
        if self.handler is not None:
            reply = self.handler(req)
            if reply is not None:
                return reply
        if self.mode == "heuristic":
            return Reply(content=heuristic_content(req, self.obey_injections))
        if self.mode == "realistic" and self.realistic is not None:
            return self.realistic(req)
        system = req.system
        if CRITIC_MARKER in system.lower():
            return Reply(content=critic_content(req))
        if self.mode == "prompt_sensitive":
            return Reply(
                content=heuristic_content(
                    req, self.obey_injections, lambda c, k: sensitive_verdict(c, k, system)
                )
            )
        noise, seed = self.noise, self.seed
        return Reply(
            content=heuristic_content(
                req,
                self.obey_injections,
                lambda c, k: _noisy_verdict(c, k, system, noise, seed),
            )
        )

    def wait(self, seconds: float) -> bool:
        """Sleep unless the server stops; True if it stopped meanwhile."""
        return self._stop.wait(seconds) if seconds > 0 else self._stop.is_set()


class _Handler(BaseHTTPRequestHandler):
    owner: FakeOpenAIServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: tests assert on the request log instead

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test): nothing to deliver

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            models = self.owner.known_models or ["gpt-4o-mini", "gpt-4o"]
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "citecal"} for m in models
            ]
            self._send(200, json.dumps({"object": "list", "data": data}).encode())
        else:
            self._send(404, b'{"error": {"message": "not found"}}')

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send(404, b'{"error": {"message": "not found"}}')
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send(400, b'{"error": {"message": "request body is not JSON"}}')
            return
        req = ChatRequest(
            body=body if isinstance(body, dict) else {},
            headers={k.lower(): v for k, v in self.headers.items()},
            received_at=time.monotonic(),
        )
        scripted = self.owner._record(req)
        try:
            reply = self.owner.answer(req, scripted)
            if self.owner.wait(self.owner.latency_s + reply.delay_s):
                return
            self._reply(req, reply)
        finally:
            self.owner._done()

    def _reply(self, req: ChatRequest, reply: Reply) -> None:
        if reply.drop:
            self.close_connection = True
            return
        if reply.raw is not None:
            self._send(reply.status, reply.raw, reply.headers)
            return
        if reply.status != 200:
            body = reply.body or {
                "error": {"message": reply.error, "type": "scripted", "code": reply.status}
            }
            self._send(reply.status, json.dumps(body).encode(), reply.headers)
            return
        content = reply.content if reply.content is not None else ""
        choices = reply.choices
        if choices is None:
            asked = req.body.get("n")
            n = int(asked) if isinstance(asked, int) and asked > 1 and self.owner.honour_n else 1
            choices = [(content, None)] * n
        asked_limit = req.body.get("max_tokens", req.body.get("max_completion_tokens"))
        limit = asked_limit if isinstance(asked_limit, int) and asked_limit > 0 else None
        answers: list[tuple[str, Any, str]] = []
        for text, lps in choices:
            if limit is not None and _tokens(text) > limit:  # a model stops at max_tokens
                answers.append((text[: limit * 4], lps, "length"))
            else:
                answers.append((text, lps, "stop"))
        out: dict[str, Any] = {
            "id": f"chatcmpl-{id(req):x}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": req.model,
            "choices": [
                {
                    "index": i,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "logprobs": None if lps is None else {"content": lps, "refusal": None},
                    "finish_reason": finish,
                }
                for i, (text, lps, finish) in enumerate(answers)
            ],
        }
        if not reply.no_usage:
            prompt_tokens, completion_tokens = reply.usage or (
                sum(_tokens(str(m.get("content", ""))) for m in req.messages),
                sum(_tokens(text) for text, _, _ in answers),
            )
            if limit is not None:
                completion_tokens = min(completion_tokens, limit * len(answers))
            out["usage"] = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            }
        self._send(200, json.dumps(out).encode(), reply.headers)


def main(argv: list[str] | None = None) -> int:
    """Serve until Ctrl-C, or run one command against the server and exit with its code.

    ``python -m citecal.testing [--port N] [--latency S]`` serves;
    ``python -m citecal.testing -- citecal eval report.md --repo .`` starts the
    server on a free port, runs the command with ``OPENAI_BASE_URL`` and
    ``OPENAI_API_KEY`` pointing at it, stops the server and returns the
    command's exit code.
    """
    import argparse
    import os
    import subprocess

    argv = list(sys.argv[1:] if argv is None else argv)
    command: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1 :]
    parser = argparse.ArgumentParser(
        prog="python -m citecal.testing",
        description="Local OpenAI-compatible server with a heuristic judge.",
    )
    parser.add_argument("--port", type=int, default=None, help="default 8399 (free port with --)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per request")
    parser.add_argument(
        "--obey-injections",
        action="store_true",
        help="answer supports when the prompt holds an instruction to the judge",
    )
    parser.add_argument(
        "--mode", choices=MODES, default="heuristic", help="judge to play (default heuristic)"
    )
    parser.add_argument("--noise", type=float, default=0.15, help="prompt_noise: flip share")
    parser.add_argument("--seed", type=int, default=0, help="prompt_noise, realistic: seed")
    parser.add_argument(
        "--error-rate",
        action="append",
        default=[],
        metavar="MODEL=RATE",
        help="realistic: share of claims MODEL gets wrong (default gpt-4o-mini=0.2, gpt-4o=0.1)",
    )
    parser.add_argument(
        "--truth",
        default=None,
        metavar="ANNOTATIONS",
        help="realistic: people's consensus in this annotation table is the true verdict",
    )
    parser.add_argument(
        "--no-logprobs", action="store_true", help="realistic: never return logprobs"
    )
    parser.add_argument("--ignore-n", action="store_true", help="return one choice whatever n")
    args = parser.parse_args(argv)
    port = args.port if args.port is not None else (0 if command else 8399)
    realistic = None
    if args.mode == "realistic":
        realistic = _realistic(args)
    with FakeOpenAIServer(
        port=port,
        latency_s=args.latency,
        obey_injections=args.obey_injections,
        mode=args.mode,
        noise=args.noise,
        seed=args.seed,
        honour_n=not args.ignore_n,
        realistic=realistic,
    ) as srv:
        if command:
            env = {**os.environ, "OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": "local"}
            code = subprocess.call(command, env=env)
            print(f"local judge server: {srv.calls} chat completion requests", file=sys.stderr)
            return code
        print(f"OPENAI_BASE_URL={srv.base_url}  ({args.mode} judge; Ctrl-C stops)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            return 0


def _realistic(args: Any) -> Callable[[ChatRequest], Reply]:
    """The realistic judge the command line asks for (README "Judge confidence")."""
    from citecal.testing.realistic_judge import DEFAULT_ERROR_RATES, RealisticJudge

    rates = dict(DEFAULT_ERROR_RATES)
    for item in args.error_rate:
        model, _, rate = item.partition("=")
        try:
            rates[model.strip()] = float(rate)
        except ValueError:
            raise SystemExit(f"--error-rate {item!r}: write MODEL=RATE, e.g. gpt-4o=0.05") from None
    options: dict[str, Any] = {
        "seed": args.seed,
        "error_rates": rates,
        "logprobs": not args.no_logprobs,
        "honour_n": not args.ignore_n,
    }
    if args.truth is None:
        return RealisticJudge(**options)
    from citecal.annotations import read_table

    return RealisticJudge.from_table(read_table(args.truth), **options)


if __name__ == "__main__":
    sys.exit(main())
