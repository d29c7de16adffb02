#!/usr/bin/env bash
# Issue 22's end-to-end line: a real `parley serve` driven over the wire by scripts/e2e/lib/seeds/groups.py: a group
# with an announcement, mute-all and a timed member mute (both refuse with their codes, then allow), join by
# approval. Users are signed in by the app's backend (signed logins), so the app's secret is read from `app create`.
#   PARLEY_E2E_VENV  virtualenv with `websockets` (default .parley/venv)
set -euo pipefail
# shellcheck source=scripts/lib/e2e.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

venv=$(e2e_realtime_venv)
db=$(e2e_fresh_db)
parley_start "$db"

out=$(DATABASE_URL="$db" PARLEY_MIGRATIONS_DIR="$PARLEY_ROOT/migrations" "$PARLEY_BIN" app create --name groups) \
    || fail "parley app create: $out"
app_key=$(awk '$1 == "appKey" { print $2 }' <<<"$out")
app_secret=$(awk '$1 == "appSecret" { print $2 }' <<<"$out")
[[ -n $app_key && -n $app_secret ]] || fail "no appKey/appSecret in: $out"

log_file="$E2E_TMP/groups.log"
E2E_LOGS+=("$log_file")
SEEDS_BASE=$PARLEY_BASE SEEDS_APP_KEY=$app_key SEEDS_APP_SECRET=$app_secret \
    timeout --kill-after=5 120 "$venv/bin/python" "$PARLEY_ROOT/scripts/e2e/lib/seeds/groups.py" \
    >"$log_file" 2>&1 || fail "the groups flow failed (its log is above)"

parley_stop_clean 15
pass "$(tail -n 1 "$log_file")"
