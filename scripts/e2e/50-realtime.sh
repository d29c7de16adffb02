#!/usr/bin/env bash
# The realtime gateway end to end against the real binary: two `parley serve` instances on one database and
# real WebSocket clients (Python `websockets`, from PyPI) on both. Covers 1:1 and group delivery to every
# device, the sender's other device, revoke/edit/read events, account conflict, a client that reconnects
# (to the other instance) after missing 500 messages and gets all of them exactly once through sync, a client
# that stops reading cut off (4000) while another keeps its latency, and IM token expiry (token_expired, 4002).
#   PARLEY_E2E_VENV  virtualenv for the client (default .parley/venv, shared with the Autobahn script)
set -euo pipefail
# shellcheck source=scripts/lib/e2e.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

venv=$(e2e_realtime_venv)

db=$(e2e_fresh_db)
# A small outgoing bound and long texts, so that a stalled client overflows its queue quickly; no send rate (one
# sender writes hundreds of messages at once).
limits=(PARLEY_WS_MAX_QUEUED_BYTES=262144 PARLEY_IM_MAX_TEXT_CHARS=100000 PARLEY_IM_SEND_RATE_PER_SECOND=0)
parley_start "$db" "${limits[@]}"
first_base=$PARLEY_BASE
first_pid=$PARLEY_PID
parley_start "$db" "${limits[@]}"
second_base=$PARLEY_BASE

app_out=$(DATABASE_URL="$db" PARLEY_MIGRATIONS_DIR="$PARLEY_ROOT/migrations" "$PARLEY_BIN" app create --name e2e) \
    || fail "parley app create failed: $app_out"
app_key=$(awk '$1 == "appKey" { print $2 }' <<<"$app_out")
[[ -n $app_key ]] || fail "no appKey in: $app_out"

client_log="$E2E_TMP/realtime-client.log"
E2E_LOGS+=("$client_log")
"$venv/bin/python" "$PARLEY_ROOT/scripts/e2e/lib/realtime_client.py" "$first_base" "$second_base" "$app_key" \
    >"$client_log" 2>&1 || fail "realtime client failed (see realtime-client.log)"
summary=$(tail -n 1 "$client_log")
"$venv/bin/python" "$PARLEY_ROOT/scripts/e2e/lib/realtime_client.py" "$first_base" "$second_base" "$app_key" slow \
    >>"$client_log" 2>&1 || fail "realtime client (slow consumer) failed (see realtime-client.log)"
summary="$summary; $(tail -n 1 "$client_log")"

# IM tokens of this app now expire after 3 seconds (what `parley app` would set; both instances hear the NOTIFY).
db_name=${db##*/}
pg_psql "$E2E_PG_PORT" "$db_name" -c "UPDATE apps SET im_token_ttl_seconds = 3, updated_at = now() WHERE app_key = '$app_key'" \
    -c "SELECT pg_notify('parley_app_changed', id::text) FROM apps WHERE app_key = '$app_key'" >/dev/null
sleep 1.5
"$venv/bin/python" "$PARLEY_ROOT/scripts/e2e/lib/realtime_client.py" "$first_base" "$second_base" "$app_key" expiry \
    >>"$client_log" 2>&1 || fail "realtime client (token expiry) failed (see realtime-client.log)"
summary="$summary; $(tail -n 1 "$client_log")"

PARLEY_PID=$first_pid
parley_stop_clean 15
pass "two instances, one database: $summary"
