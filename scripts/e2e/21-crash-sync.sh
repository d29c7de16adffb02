#!/usr/bin/env bash
# Sync across a PostgreSQL crash (kill -9, not a clean stop): a message sent after the restart reaches the client
# that synced just before the crash.
#
# After a crash PostgreSQL gives out again the xids whose WAL never reached the disk. Here 200 rolled-back
# transactions take xids right before the sync, on a durable cluster of the script's own whose WAL writer waits
# 10 s, so nothing flushes their WAL. The sync's cursor sits above those xids. Unless the sync made its horizon
# durable (`StreamHorizon`), the message sent after the restart is stored under one of the reused xids, below the
# cursor, and the next sync never lists it.
set -euo pipefail
# shellcheck source=scripts/lib/e2e.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

pg_dir=$E2E_TMP/durable
pg_port=$(free_port)
stop_own_cluster() { pg_cluster_kill "$pg_dir"; }
e2e_on_exit stop_own_cluster
# Not --fast: fsync and synchronous_commit on, as in production (the shared test cluster has both off).
pg_cluster_start "$pg_dir" "$pg_port" >/dev/null
printf 'wal_writer_delay = 10s\n' >>"$pg_dir/data/parley.conf"
pg_cluster_stop "$pg_dir"
pg_cluster_start "$pg_dir" >/dev/null
[[ $(pg_psql "$pg_port" postgres -tAc "SHOW wal_writer_delay") == 10s ]] || fail "wal_writer_delay was not applied"
pg_createdb "$pg_port" crash_sync >/dev/null
db=$(pg_url "$pg_port" crash_sync)
parley_start "$db"

app_out=$(DATABASE_URL="$db" PARLEY_MIGRATIONS_DIR="$PARLEY_ROOT/migrations" "$PARLEY_BIN" app create --name crash-sync) \
    || fail "parley app create failed: $app_out"
app_key=$(awk '$1 == "appKey" { print $2 }' <<<"$app_out")
[[ -n $app_key ]] || fail "no appKey in: $app_out"

# call METHOD PATH [BODY] [TOKEN]: sets HTTP_STATUS and HTTP_BODY.
call() {
    local args=(-sS --max-time 5 -o "$E2E_TMP/body" -w '%{http_code}' -X "$1" -H "X-App-Key: $app_key")
    [[ -n ${3:-} ]] && args+=(-H 'Content-Type: application/json' --data "$3")
    [[ -n ${4:-} ]] && args+=(-H "Authorization: Bearer $4")
    HTTP_STATUS=$(curl "${args[@]}" "$PARLEY_BASE$2" || true)
    HTTP_BODY=$(cat "$E2E_TMP/body" 2>/dev/null || true)
}
register() {
    call POST /api/auth/register "{\"username\":\"$1\",\"password\":\"e2e password 1\",\"platform\":\"ios\"}"
    [[ $HTTP_STATUS == 200 ]] || fail "register $1: HTTP $HTTP_STATUS $HTTP_BODY"
    printf '%s' "$HTTP_BODY"
}
alice=$(register alice)
bob=$(register bob)
alice_token=$(jq -r .data.accessToken <<<"$alice")
bob_token=$(jq -r .data.accessToken <<<"$bob")
bob_id=$(jq -r .data.user.id <<<"$bob")

send() {
    call POST /api/im/messages \
        "{\"toId\":\"$bob_id\",\"chatType\":\"single\",\"msgType\":\"text\",\"content\":\"$1\",\"clientMsgId\":\"$1\"}" \
        "$alice_token"
}
# sync CURSOR: bob's changes after CURSOR (one page); sets SYNC_BODY.
sync() {
    call GET "/api/im/sync?cursor=$1&limit=500" "" "$bob_token"
    [[ $HTTP_STATUS == 200 ]] || fail "sync from '$1': HTTP $HTTP_STATUS $HTTP_BODY"
    [[ $(jq -r .data.hasMore <<<"$HTTP_BODY") == false ]] || fail "sync from '$1' has more than one page"
    SYNC_BODY=$HTTP_BODY
}

sync ""
start_cursor=$(jq -r .data.cursor <<<"$SYNC_BODY")
send before-crash
[[ $HTTP_STATUS == 201 ]] || fail "send before the crash: HTTP $HTTP_STATUS $HTTP_BODY"

# xids handed out and rolled back: their abort records stay in the WAL buffers.
for ((i = 0; i < 200; i++)); do echo "BEGIN; SELECT pg_current_xact_id(); ROLLBACK;"; done \
    | pg_psql "$pg_port" crash_sync -tA >/dev/null
sync "$start_cursor"
crash_cursor=$(jq -r .data.cursor <<<"$SYNC_BODY")
[[ $(jq '[.data.changes[] | select(.message.clientMsgId == "before-crash")] | length' <<<"$SYNC_BODY") == 1 ]] \
    || fail "the sync before the crash did not list the message sent before it: $SYNC_BODY"
pg_cluster_kill "$pg_dir"
pg_cluster_start "$pg_dir" >/dev/null

# parley reconnects by itself; sends answer 503 until it has.
deadline=$((SECONDS + 30))
while :; do
    send after-crash
    [[ $HTTP_STATUS == 201 ]] && break
    ((SECONDS < deadline)) || fail "no send succeeded within 30 s of the restart: HTTP $HTTP_STATUS $HTTP_BODY"
    sleep 0.3
done
after_xid=$(pg_psql "$pg_port" crash_sync -tAc "SELECT xid FROM messages WHERE client_msg_id = 'after-crash'")

sync "$crash_cursor"
listed=$(jq -r '[.data.changes[] | select(.type == "message") | .message.clientMsgId] | join(",")' <<<"$SYNC_BODY")
[[ $listed == after-crash ]] \
    || fail "the sync from the cursor of before the crash ($crash_cursor) listed [$listed], not [after-crash] (its xid: $after_xid)"

parley_stop_clean 15
pass "the message sent after a kill -9 of PostgreSQL (xid $after_xid) was listed by the sync from the cursor handed out just before it ($crash_cursor)"
