#!/usr/bin/env bash
# Stop the local Argilla stack started by up.sh (idempotent). Data is kept.
# Usage: services/argilla/down.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

# Reverse start order: nothing loses a dependency while it still works.
stop_component worker
stop_component server
stop_component search
stop_component redis
