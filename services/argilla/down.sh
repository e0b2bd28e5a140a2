#!/usr/bin/env bash
# Stop the local Argilla stack started by up.sh (idempotent). Data is kept.
# Usage: services/argilla/down.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

# Reverse start order: nothing loses a dependency while it still works.
stop_component worker
stop_component server
stop_component search
[[ -f "$RUN_DIR/postgres.pid" ]] && stop_component postgres
stop_component redis
