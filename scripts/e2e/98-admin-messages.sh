#!/usr/bin/env bash
# Issue 20's end-to-end line for the admin API's messages and groups: a real `parley serve` driven by
# scripts/e2e/lib/seeds/admin_messages.py as an app's backend drives it (signed server-to-server calls): seed 000's
# custom `account_conflict` notice to a user with a live socket, an online-only message, a broadcast to 1,000 users
# created by signed logins, and a group made by the admin API with a timed mute and mute-all.
#   PARLEY_E2E_VENV  virtualenv with `websockets` (default .parley/venv)
set -euo pipefail
# shellcheck source=scripts/lib/e2e.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

venv=$(e2e_realtime_venv)
db=$(e2e_fresh_db)
# 1,000 signed logins from one address: the backend's, so the per-address auth limit is off here.
parley_start "$db" PARLEY_AUTH_RATE_PER_MINUTE=0

out=$(DATABASE_URL="$db" PARLEY_MIGRATIONS_DIR="$PARLEY_ROOT/migrations" "$PARLEY_BIN" app create --name admin-messages) \
    || fail "parley app create: $out"
app_key=$(awk '$1 == "appKey" { print $2 }' <<<"$out")
app_secret=$(awk '$1 == "appSecret" { print $2 }' <<<"$out")
[[ -n $app_key && -n $app_secret ]] || fail "no appKey/appSecret in: $out"

log_file="$E2E_TMP/admin_messages.log"
E2E_LOGS+=("$log_file")
SEEDS_BASE=$PARLEY_BASE SEEDS_APP_KEY=$app_key SEEDS_APP_SECRET=$app_secret \
    timeout --kill-after=5 240 "$venv/bin/python" "$PARLEY_ROOT/scripts/e2e/lib/seeds/admin_messages.py" \
    >"$log_file" 2>&1 || fail "the admin messages flow failed (its log is above)"

parley_stop_clean 15
pass "$(tail -n 1 "$log_file")"
