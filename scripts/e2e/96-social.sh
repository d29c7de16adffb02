#!/usr/bin/env bash
# Issue 19's end-to-end line: seed 004's (Bmob IM) friends flow on two `parley serve` instances sharing one fresh
# database, driven at the wire level by scripts/e2e/lib/seeds/seed_004_social.py (the seeds' client.py and wire.py):
# sign up, find by username, request, accept, both list friends, chat, block (1119), unblock, the app's
# `--direct-messages friends` policy refusing a stranger (1120, set with `parley app update`), account deletion
# (4501, logins 1048). Alice and Bob have a socket on each instance; after every step each socket must have had
# exactly the events meant for it, each once, and a socket that left comes back on the other instance and finds
# what it missed through `sync`, once.
#   PARLEY_E2E_VENV  virtualenv with `websockets` (default .parley/venv)
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
second_pid=$PARLEY_PID

parley_cli() {
    DATABASE_URL="$db" PARLEY_MIGRATIONS_DIR="$PARLEY_ROOT/migrations" "$PARLEY_BIN" "$@"
}
out=$(parley_cli app create --name seed-004-social) || fail "parley app create: $out"
app_key=$(awk '$1 == "appKey" { print $2 }' <<<"$out")
[[ -n $app_key ]] || fail "no appKey in: $out"

log_file="$E2E_TMP/seed_004_social.log"
E2E_LOGS+=("$log_file")
SEEDS_BASE=$first_base SEEDS_OTHER_BASE=$second_base SEEDS_APP_KEY=$app_key SEEDS_DATABASE_URL="$db" \
    SEEDS_PARLEY_BIN="$PARLEY_BIN" PARLEY_MIGRATIONS_DIR="$PARLEY_ROOT/migrations" \
    timeout --kill-after=5 120 "$venv/bin/python" "$PARLEY_ROOT/scripts/e2e/lib/seeds/seed_004_social.py" \
    >"$log_file" 2>&1 || fail "the social flow failed (its log is above)"

PARLEY_PID=$second_pid
parley_stop_clean 15
PARLEY_PID=$first_pid
parley_stop_clean 15
pass "$(tail -n 1 "$log_file")"
