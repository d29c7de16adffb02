#!/usr/bin/env bash
# Chat rooms end to end against the real binary: two `parley serve` instances on one database and real WebSocket
# clients (Python `websockets`, from PyPI) on both. Users enter one room from either instance, messages reach whoever
# is inside on both, a later entrant gets the recent history (enter ack and REST), the online count covers both
# instances, leaving and closing stop delivery, and a dismissal reaches the other instance.
#   PARLEY_E2E_VENV  virtualenv for the client (default .parley/venv, shared with the other realtime scripts)
set -euo pipefail
# shellcheck source=scripts/lib/e2e.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

venv=$(e2e_realtime_venv)

db=$(e2e_fresh_db)
parley_start "$db"
first_base=$PARLEY_BASE
first_pid=$PARLEY_PID
parley_start "$db"
second_base=$PARLEY_BASE

app_out=$(DATABASE_URL="$db" PARLEY_MIGRATIONS_DIR="$PARLEY_ROOT/migrations" "$PARLEY_BIN" app create --name e2e) \
    || fail "parley app create failed: $app_out"
app_key=$(awk '$1 == "appKey" { print $2 }' <<<"$app_out")
[[ -n $app_key ]] || fail "no appKey in: $app_out"

client_log="$E2E_TMP/rooms-client.log"
E2E_LOGS+=("$client_log")
timeout 120 "$venv/bin/python" "$PARLEY_ROOT/scripts/e2e/lib/rooms_client.py" "$first_base" "$second_base" \
    "$app_key" >"$client_log" 2>&1 || fail "rooms client failed (see rooms-client.log)"
summary=$(tail -n 1 "$client_log")

PARLEY_PID=$first_pid
parley_stop_clean 15
pass "two instances, one database: $summary"
