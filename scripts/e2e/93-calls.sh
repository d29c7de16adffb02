#!/usr/bin/env bash
# Issue 21's call signalling on two `parley serve` instances sharing one fresh database, driven at the wire level by
# scripts/e2e/lib/calls_flow.py (the seeds' client.py): a 1:1 audio call rings both devices of the callee (one on
# each instance), is answered on one (the other hears it was answered elsewhere), hung up, and leaves one
# `callAudio` record; a call nobody answers times out once across the instances and leaves a `missed` record; a
# 3-party video call where one callee times out goes on without them and leaves `completed` and `missed` records.
#   PARLEY_E2E_VENV  virtualenv with `websockets` (default .parley/venv)
set -euo pipefail
# shellcheck source=scripts/lib/e2e.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

venv=$(e2e_realtime_venv)
db=$(e2e_fresh_db)
# Both instances sweep call timeouts often: the timeout must still fire once.
parley_start "$db" PARLEY_CALL_SWEEP_MS=100
first_base=$PARLEY_BASE
first_pid=$PARLEY_PID
parley_start "$db" PARLEY_CALL_SWEEP_MS=100
second_base=$PARLEY_BASE
second_pid=$PARLEY_PID

out=$(DATABASE_URL="$db" PARLEY_MIGRATIONS_DIR="$PARLEY_ROOT/migrations" "$PARLEY_BIN" app create --name calls) \
    || fail "parley app create: $out"
app_key=$(awk '$1 == "appKey" { print $2 }' <<<"$out")
[[ -n $app_key ]] || fail "no appKey in: $out"

log_file="$E2E_TMP/calls_flow.log"
E2E_LOGS+=("$log_file")
SEEDS_BASE=$first_base SEEDS_OTHER_BASE=$second_base SEEDS_APP_KEY=$app_key \
    timeout --kill-after=5 120 "$venv/bin/python" "$PARLEY_ROOT/scripts/e2e/lib/calls_flow.py" \
    >"$log_file" 2>&1 || fail "the calls flow failed (its log is above)"

PARLEY_PID=$second_pid
parley_stop_clean 15
PARLEY_PID=$first_pid
parley_stop_clean 15
pass "$(tail -n 1 "$log_file")"
