#!/usr/bin/env bash
# Presence (issue 22) end to end against the real binary: two `parley serve` instances on one database, a friend
# going online, away and offline on the other instance (coalesced `presence` events), the REST lookup on both, the
# last-seen privacy setting, and the other instance killed: its user goes offline once its heartbeat is stale.
set -euo pipefail
# shellcheck source=scripts/lib/e2e.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

venv=$(e2e_realtime_venv)
db=$(e2e_fresh_db)
parley_start "$db" PARLEY_PRESENCE_COALESCE_MS=200
first_base=$PARLEY_BASE
first_pid=$PARLEY_PID
parley_start "$db" PARLEY_PRESENCE_COALESCE_MS=200
second_base=$PARLEY_BASE
second_pid=$PARLEY_PID

out=$(DATABASE_URL="$db" PARLEY_MIGRATIONS_DIR="$PARLEY_ROOT/migrations" "$PARLEY_BIN" app create --name presence) \
    || fail "parley app create: $out"
app_key=$(awk '$1 == "appKey" { print $2 }' <<<"$out")
[[ -n $app_key ]] || fail "no appKey in: $out"

log_file="$E2E_TMP/presence_flow.log"
E2E_LOGS+=("$log_file")
# The flow kills the second instance itself (SIGKILL: a crash, no clean removal of its presence).
SEEDS_BASE=$first_base SEEDS_OTHER_BASE=$second_base SEEDS_APP_KEY=$app_key PRESENCE_KILL_PID=$second_pid \
    timeout --kill-after=5 120 "$venv/bin/python" "$PARLEY_ROOT/scripts/e2e/lib/presence_flow.py" \
    >"$log_file" 2>&1 || fail "the presence flow failed (its log is above)"
kill -0 "$second_pid" 2>/dev/null && fail "the second instance survived SIGKILL"

PARLEY_PID=$first_pid
parley_stop_clean 15
pass "$(tail -n 1 "$log_file")"
