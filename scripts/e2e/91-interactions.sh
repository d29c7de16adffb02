#!/usr/bin/env bash
# Issue 22's end-to-end lines for messages: a reply, a reaction and a pin seen by the other member live (on another
# `parley serve` sharing the database) and through sync, and an @mention pushed through a muted conversation, driven
# over the wire by scripts/e2e/lib/seeds/interactions.py; pushes go to scripts/lib/mock_apns.py.
#   PARLEY_E2E_VENV  virtualenv with `websockets` (default .parley/venv)
set -euo pipefail
# shellcheck source=scripts/lib/e2e.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

venv=$(e2e_realtime_venv)
e2e_mock_apns "${PARLEY_TEST_PUSH_PYTHON:-$venv/bin/python}"
db=$(e2e_fresh_db)
# Push workers poll every 50 ms, so a push reaches the mock within a fraction of a second.
parley_start "$db" PARLEY_PUSH_POLL_MS=50
first_base=$PARLEY_BASE
first_pid=$PARLEY_PID
parley_start "$db" PARLEY_PUSH_POLL_MS=50
second_base=$PARLEY_BASE
second_pid=$PARLEY_PID

parley_cli() {
    DATABASE_URL="$db" PARLEY_MIGRATIONS_DIR="$PARLEY_ROOT/migrations" "$PARLEY_BIN" "$@"
}
out=$(parley_cli app create --name interactions) || fail "parley app create: $out"
app_key=$(awk '$1 == "appKey" { print $2 }' <<<"$out")
app_secret=$(awk '$1 == "appSecret" { print $2 }' <<<"$out")
[[ -n $app_key && -n $app_secret ]] || fail "no appKey/appSecret in: $out"
out=$(parley_cli app push "$app_key" --apns-key-file "$APNS_DIR/AuthKey.p8" --key-id "$APNS_KEY_ID" \
    --team-id "$APNS_TEAM_ID" --bundle-id com.example.interactions --endpoint "$APNS_ENDPOINT" --preview full \
    --enable) || fail "parley app push: $out"

log_file="$E2E_TMP/interactions.log"
E2E_LOGS+=("$log_file")
SEEDS_BASE=$first_base SEEDS_OTHER_BASE=$second_base SEEDS_APP_KEY=$app_key SEEDS_APP_SECRET=$app_secret \
    SEEDS_APNS_RECORD="$APNS_DIR/requests.jsonl" SEEDS_DATABASE_URL="$db" \
    timeout --kill-after=5 120 "$venv/bin/python" "$PARLEY_ROOT/scripts/e2e/lib/seeds/interactions.py" \
    >"$log_file" 2>&1 || fail "the interactions flow failed (its log is above)"

PARLEY_PID=$second_pid
parley_stop_clean 15
PARLEY_PID=$first_pid
parley_stop_clean 15
pass "$(tail -n 1 "$log_file")"
