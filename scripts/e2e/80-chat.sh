#!/usr/bin/env bash
# `parley chat` end to end: two users chat through the real binary against two `parley serve` instances on one
# database. Bob listens (registering himself, stdin closed, --wait-for); alice pipes commands in: opens the
# conversation with bob's id, sends, revokes, uploads a small file (its signed URL must download byte for byte),
# and reads the history. Then bob's server goes down; alice sends through the other instance with --send while
# bob is away; bob's server comes back on the same port and bob must reconnect, sync, and print each missed
# message exactly once. Every wait is bounded (the clients' own --timeout, `timeout`, and polling deadlines).
set -euo pipefail
# shellcheck source=scripts/lib/e2e.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

db=$(e2e_fresh_db)
parley_start "$db"
bob_server_pid=$PARLEY_PID
bob_port=$PARLEY_PORT
bob_base=$PARLEY_BASE
parley_start "$db"
other_base=$PARLEY_BASE

app_out=$(DATABASE_URL="$db" PARLEY_MIGRATIONS_DIR="$PARLEY_ROOT/migrations" "$PARLEY_BIN" app create --name e2e-chat) \
    || fail "parley app create failed: $app_out"
app_key=$(awk '$1 == "appKey" { print $2 }' <<<"$app_out")
[[ -n $app_key ]] || fail "no appKey in: $app_out"
export PARLEY_CHAT_APP_KEY=$app_key

bob_out="$E2E_TMP/bob.out"
bob_err="$E2E_TMP/bob.err"
alice_out="$E2E_TMP/alice.out"
alice_err="$E2E_TMP/alice.err"
E2E_LOGS+=("$bob_out" "$bob_err" "$alice_out" "$alice_err")

# Waits up to $2 seconds until file $1 contains the fixed string $3.
wait_for_line() {
    local file=$1 timeout=$2 text=$3 deadline=$((SECONDS + $2))
    until grep -qF -- "$text" "$file" 2>/dev/null; do
        ((SECONDS < deadline)) || fail "no '$text' in $(basename "$file") within ${timeout}s"
        sleep 0.1
    done
}

# Bob: five messages from alice must reach him (three live, two through sync after the outage).
PARLEY_CHAT_PASSWORD='bob-password-1' timeout 150 "$PARLEY_BIN" chat --server "$bob_base" --user bob --register \
    --wait-for 5 --timeout 120 </dev/null >"$bob_out" 2>"$bob_err" &
bob_pid=$!
E2E_PIDS+=("$bob_pid")
wait_for_line "$bob_err" 30 "connected to $bob_base/ws"
bob_id=$(sed -n 's/^logged in as bob (user id \(.*\))$/\1/p' "$bob_out")
[[ $bob_id == u_* ]] || fail "no user id in bob's output: $(cat "$bob_out")"

upload="$E2E_TMP/small.bin"
head -c 3000 /dev/urandom >"$upload"
printf '/open %s\nhello bob\noops\n/revoke\n/upload %s\n/history 5\n/list\n' "$bob_id" "$upload" \
    | PARLEY_CHAT_PASSWORD='alice-password-1' timeout 90 "$PARLEY_BIN" chat --server "$other_base" --user alice \
        --register --timeout 60 >"$alice_out" 2>"$alice_err" \
    || fail "alice's scripted session failed (exit $?)"
grep -qF "[bob] alice: hello bob  #" "$alice_out" || fail "alice's send was not acknowledged"
grep -qF "[bob] you revoked #" "$alice_out" || fail "alice's revoke was not acknowledged"
grep -qE "^1\. bob  \(si:[^)]+\)" "$alice_out" || fail "alice's /list does not show the conversation with bob"

url=$(sed -n 's/^signed URL (until [^)]*): \(http.*\)$/\1/p' "$alice_out")
[[ $url == "$other_base/files/"* ]] || fail "no signed URL in alice's output"
curl -sS --max-time 10 -o "$E2E_TMP/alice-download.bin" "$url" || fail "the signed URL did not download"
cmp -s "$upload" "$E2E_TMP/alice-download.bin" || fail "the signed URL's bytes differ from the upload"

# Bob saw everything live: the messages, the revoke, the file with his own signed URL. "oops" reaches bob's instance
# through the cluster relay, which loads the message by id: when the revoke has committed by then, bob is shown it
# revoked. Either way it is one line, before the revoke's.
wait_for_line "$bob_out" 20 "[alice] alice: hello bob  #"
wait_for_line "$bob_out" 20 "[alice] alice revoked #"
grep -qE '^\[alice\] alice: (oops|\(revoked\))  #' "$bob_out" || fail "bob did not get alice's second message"
wait_for_line "$bob_out" 20 "[alice] alice: [file small.bin, 3000 bytes]  #"
wait_for_line "$bob_out" 20 "    ↳ $bob_base/files/"
bob_url=$(sed -n 's/^    ↳ \(http.*\)$/\1/p' "$bob_out")
curl -sS --max-time 10 -o "$E2E_TMP/bob-download.bin" "$bob_url" || fail "bob's signed URL did not download"
cmp -s "$upload" "$E2E_TMP/bob-download.bin" || fail "bob's signed URL's bytes differ from the upload"

# Bob's server goes down (SIGTERM: bob's socket is closed with 1001); alice sends through the other instance.
kill -TERM "$bob_server_pid"
wait "$bob_server_pid" || fail "bob's server exited with status $? after SIGTERM"
wait_for_line "$bob_err" 20 "disconnected: closed by the server with 1001"
PARLEY_CHAT_PASSWORD='alice-password-1' timeout 60 "$PARLEY_BIN" chat --server "$other_base" --user alice \
    --to "$bob_id" --send "while you were away" --send "and one more" --timeout 30 >>"$alice_out" 2>>"$alice_err" \
    || fail "alice's --send session failed"

# Bob's server comes back on the same port; bob reconnects, syncs and gets both messages once.
DATABASE_URL="$db" PARLEY_HTTP_HOST=127.0.0.1 PARLEY_HTTP_PORT="$bob_port" PARLEY_MIGRATIONS_DIR="$PARLEY_ROOT/migrations" \
    "$PARLEY_BIN" serve </dev/null >>"$E2E_TMP/parley-$bob_port.log" 2>&1 &
E2E_PIDS+=("$!")
wait_http "$bob_base/healthz" 30 "$!" || fail "bob's server did not come back on port $bob_port"
wait_for_line "$bob_err" 30 "reconnected"

status=0
wait "$bob_pid" || status=$?
((status == 0)) || fail "bob's session exited with status $status (expected 0 after 5 messages)"
# The sync after the reconnect repeats what bob saw live since his first sync: each change still prints once.
for line in "alice: hello bob  #" "alice: while you were away  #" "alice: and one more  #" "alice revoked #"; do
    count=$(grep -cF "[alice] $line" "$bob_out" || true)
    ((count == 1)) || fail "bob printed '$line' $count times (expected once)"
done

pass "bob got alice's messages, revoke and file live (both signed URLs byte-identical), and the two sent during" \
    "his server's outage once each after reconnect + sync"
