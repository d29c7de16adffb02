#!/usr/bin/env bash
# Issue 20's admin API as an app's backend drives it, against a real `parley serve` (scripts/e2e/lib/admin_users_flow.py,
# on the seeds' client.py): import 100 profiles with one signed call, read them back, query online state for users
# with and without sockets, ban a user whose live socket closes 4501 and whose signed login answers 1043, unban,
# and read the statistics (users, daily active users, messages per day) once the server flushed its counts.
#   PARLEY_E2E_VENV  virtualenv with `websockets` (default .parley/venv)
set -euo pipefail
# shellcheck source=scripts/lib/e2e.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

venv=$(e2e_realtime_venv)
db=$(e2e_fresh_db)
parley_start "$db" PARLEY_STATS_FLUSH_SECONDS=1

out=$(DATABASE_URL="$db" PARLEY_MIGRATIONS_DIR="$PARLEY_ROOT/migrations" "$PARLEY_BIN" app create --name e2e-admin-users) \
    || fail "parley app create: $out"
app_key=$(awk '$1 == "appKey" { print $2 }' <<<"$out")
app_secret=$(awk '$1 == "appSecret" { print $2 }' <<<"$out")
[[ -n $app_key && -n $app_secret ]] || fail "no appKey/appSecret in: $out"

log_file="$E2E_TMP/admin_users.log"
E2E_LOGS+=("$log_file")
SEEDS_BASE=$PARLEY_BASE SEEDS_APP_KEY=$app_key SEEDS_APP_SECRET=$app_secret \
    timeout --kill-after=5 120 "$venv/bin/python" "$PARLEY_ROOT/scripts/e2e/lib/admin_users_flow.py" \
    >"$log_file" 2>&1 || fail "the admin flow failed (its log is above)"

parley_stop_clean 15
pass "$(tail -n 1 "$log_file")"
