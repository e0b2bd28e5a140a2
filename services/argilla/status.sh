#!/usr/bin/env bash
# Print the state of each component of the local Argilla stack.
# Exit status 0 when every component runs and answers, 3 otherwise.
# Usage: services/argilla/status.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

rc=0
show() {  # show NAME WHERE CHECK
  local name="$1" where="$2" check="$3" state pid=""
  [[ -f "$RUN_DIR/$name.pid" ]] && pid="$(cat "$RUN_DIR/$name.pid")"
  if pid_alive "$name" && "$check"; then
    state="running"
  elif pid_alive "$name"; then
    state="starting or not answering"; rc=3
  elif "$check"; then
    state="answering, not started by citecal"
  else
    state="stopped"; rc=3
  fi
  printf '%-15s %-34s %-8s %s\n' "$name" "$where" "${pid:--}" "$state"
}
printf '%-15s %-34s %-8s %s\n' COMPONENT ADDRESS PID STATE
show redis "redis://127.0.0.1:$REDIS_PORT" redis_ok
show search "$SEARCH_URL ($SEARCH_ENGINE)" search_ok
show server "$ARGILLA_URL" argilla_ok
show worker "rq queues default, high" worker_ok
[[ "$ARGILLA_DB" == postgresql ]] && show postgres "postgresql://127.0.0.1:$POSTGRES_PORT" postgres_ok
echo "state directory: $STATE"
exit "$rc"
