#!/usr/bin/env bash
# Stop the local Argilla stack started by up.sh (idempotent). Data is kept.
# Usage: services/argilla/down.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

stop() {  # stop NAME: TERM the process group, wait, then KILL
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

# Reverse start order: nothing loses a dependency while it still works.
stop worker
stop server
stop search
stop redis
