#!/usr/bin/env bash
# Start the local Argilla stack (Redis, search engine, argilla-server, rq worker).
# Idempotent: components already running are left alone; returns once every
# component answers. Installs what is missing first (see install.sh).
# Usage: services/argilla/up.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

check_port_settings  # before a first install's few minutes, not after

need_free_port() {  # need_free_port NAME PORT VARIABLE
  if port_open "$2"; then
    die "port $2 (for $1, $3) is taken by another process: free it, or move this stack with $3 (all ports: services/argilla/env.sh)"
  fi
}

# Every port this start needs must be free before anything starts (components already
# running from this state directory keep theirs).
pid_alive redis || need_free_port redis "$REDIS_PORT" CITECAL_REDIS_PORT
if ! pid_alive search; then
  need_free_port "$SEARCH_ENGINE" "$SEARCH_PORT" "CITECAL_SEARCH_BASE_PORT (+1)"
  need_free_port "$SEARCH_ENGINE transport" "$SEARCH_TRANSPORT_PORT" CITECAL_SEARCH_TRANSPORT_PORT
fi
pid_alive server || need_free_port argilla-server "$ARGILLA_PORT" CITECAL_ARGILLA_PORT
if [[ "$ARGILLA_DB" == postgresql ]] && ! pid_alive postgres; then
  need_free_port postgresql "$POSTGRES_PORT" CITECAL_POSTGRES_PORT
fi

"$SERVICES_DIR/install.sh" "$@"
mkdir -p "$LOG_DIR" "$RUN_DIR" "$STATE/redis" "$STATE/home"

# A start that fails stops what it started (and only that): no Redis or JVM left behind.
STARTED=()
cleanup_on_failure() {
  local rc=$? i
  ((rc == 0)) && return 0
  ((${#STARTED[@]})) || return "$rc"
  log "start-up failed: stopping what this run started (${STARTED[*]})"
  for ((i = ${#STARTED[@]} - 1; i >= 0; i--)); do stop_component "${STARTED[i]}" || true; done
  return "$rc"
}
trap cleanup_on_failure EXIT

start_bg() {  # start_bg NAME DIR CMD...: own session (survives the caller), pid file, log
  local name="$1" dir="$2"
  shift 2
  printf '\n==== %s start %s\n' "$name" "$(date -u +%FT%TZ)" >>"$LOG_DIR/$name.log"
  # exec all the way down: one process, whose pid goes into the pid file.
  (cd "$dir" && exec setsid bash -c 'echo $$ >"$0"; exec "$@"' "$RUN_DIR/$name.pid" "$@") \
    >>"$LOG_DIR/$name.log" 2>&1 </dev/null &
  local i
  for ((i = 0; i < 50; i++)); do
    if [[ -s "$RUN_DIR/$name.pid" ]]; then STARTED+=("$name"); return 0; fi
    sleep 0.1
  done
  die "$name did not start (log: $LOG_DIR/$name.log)"
}

t0=$SECONDS

# Redis: no persistence, loopback only.
if pid_alive redis && redis_ok; then
  log "redis already running on 127.0.0.1:$REDIS_PORT"
else
  rm -f "$RUN_DIR/redis.pid"
  start_bg redis "$STATE/redis" redis-server --bind 127.0.0.1 --port "$REDIS_PORT" \
    --save "" --appendonly no --protected-mode yes --dir "$STATE/redis" --daemonize no
fi

# Search engine: one node in one JVM, loopback only, capped heap.
SEARCH_STARTED=0
if pid_alive search && search_ok; then
  log "$SEARCH_ENGINE already running on $SEARCH_URL"
elif pid_alive search; then
  log "$SEARCH_ENGINE is starting"
else
  rm -f "$RUN_DIR/search.pid"
  conf="$SEARCH_DIR/data/node_1/config"
  mkdir -p "$conf"
  cat >"$conf/opensearch.yml" <<YML
# Written by services/argilla/up.sh on every start.
network.host: 127.0.0.1
http.port: $SEARCH_PORT
transport.port: $SEARCH_TRANSPORT_PORT
discovery.type: single-node
cluster.routing.allocation.disk.threshold_enabled: false
YML
  start_bg search "$SEARCH_DIR" java "-Xms$SEARCH_HEAP" "-Xmx$SEARCH_HEAP" -Djava.awt.headless=true \
    -Dfile.encoding=UTF-8 -cp "$SEARCH_DIR/lib/*:$SEARCH_DIR/lib/knn/*" "$SEARCH_RUNNER_MAIN" \
    -pluginTypes "$KNN_PLUGIN_CLASS" -numOfNode 1 -baseHttpPort "$SEARCH_BASE_PORT" -basePath "$SEARCH_DIR/data" \
    -clusterName citecal-argilla
  SEARCH_STARTED=1
fi

wait_for redis 30 redis_ok redis || die "redis did not start (log: $LOG_DIR/redis.log)"

# PostgreSQL (CITECAL_ARGILLA_DB=postgresql): a cluster of this stack's own, loopback only,
# trust authentication for the local user argilla. PostgreSQL refuses to run as root, so as
# root it runs as Debian's postgres user.
if [[ "$ARGILLA_DB" == postgresql ]]; then
  PGB="$(pg_bin)"
  as_pg=()
  [[ "$(id -u)" == 0 ]] && as_pg=(setpriv --reuid=postgres --regid=postgres --init-groups)
  if [[ ! -f "$PG_DIR/PG_VERSION" ]]; then
    mkdir -p "$PG_DIR"
    [[ "$(id -u)" == 0 ]] && chown postgres:postgres "$PG_DIR"
    chmod 700 "$PG_DIR"
    "${as_pg[@]}" "$PGB/initdb" -D "$PG_DIR" -U argilla --auth=trust -E UTF8 >>"$LOG_DIR/postgres.log" 2>&1 ||
      die "initdb failed (log: $LOG_DIR/postgres.log)"
  fi
  if pid_alive postgres && postgres_ok; then
    log "postgresql already running on 127.0.0.1:$POSTGRES_PORT"
  else
    rm -f "$RUN_DIR/postgres.pid"
    start_bg postgres "$STATE" "${as_pg[@]}" "$PGB/postgres" -D "$PG_DIR" -p "$POSTGRES_PORT" \
      -c listen_addresses=127.0.0.1 -c unix_socket_directories="" -c max_connections=200
  fi
  wait_for postgresql 60 postgres_ok postgres || die "postgresql did not start (log: $LOG_DIR/postgres.log)"
  "$PGB/psql" -h 127.0.0.1 -p "$POSTGRES_PORT" -U argilla -d postgres -tAc \
    "SELECT 1 FROM pg_database WHERE datname = 'argilla'" | grep -q 1 ||
    "$PGB/createdb" -h 127.0.0.1 -p "$POSTGRES_PORT" -U argilla argilla
fi

# Database migration and owner user (no-ops when done) while the JVM warms up.
server_env
if ! pid_alive server; then
  (cd "$STATE" && "$VENV/bin/python" "$SERVICES_DIR/bootstrap_db.py") >>"$LOG_DIR/bootstrap.log" 2>&1 ||
    { tail -n 30 "$LOG_DIR/bootstrap.log" >&2; die "database set-up failed (log: $LOG_DIR/bootstrap.log)"; }
fi

wait_for "$SEARCH_ENGINE" 180 search_ok search || die "$SEARCH_ENGINE did not start (log: $LOG_DIR/search.log)"
((SEARCH_STARTED)) && log "$SEARCH_ENGINE answers on $SEARCH_URL"

# argilla-server: UI and API on one port.
if pid_alive server && argilla_ok; then
  log "argilla-server already running on $ARGILLA_URL"
elif ! pid_alive server; then
  rm -f "$RUN_DIR/server.pid"
  start_bg server "$STATE" "$VENV/bin/uvicorn" argilla_server:app \
    --host 127.0.0.1 --port "$ARGILLA_PORT" --workers "$ARGILLA_WORKERS" \
    --log-level warning --no-access-log
fi

# rq worker: every dataset update enqueues a job.
if pid_alive worker; then
  log "worker already running"
else
  rm -f "$RUN_DIR/worker.pid"
  start_bg worker "$STATE" "$VENV/bin/python" -m argilla_server worker --num-workers 1
fi

wait_for argilla-server 120 argilla_ok server || die "argilla-server did not start (log: $LOG_DIR/server.log)"
sleep 1
pid_alive worker || { tail -n 30 "$LOG_DIR/worker.log" >&2; die "the rq worker exited (log: $LOG_DIR/worker.log)"; }

log "ready in $((SECONDS - t0))s: $ARGILLA_URL (user $OWNER_USERNAME, password $OWNER_PASSWORD, API key $OWNER_API_KEY)"
