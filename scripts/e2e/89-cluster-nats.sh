#!/usr/bin/env bash
# The `cluster` topology end to end (issue 23): nats-server (Debian's package) and three `parley serve` instances on
# one database relaying through it (PARLEY_RELAY=nats://...), with real WebSocket clients (Python `websockets`):
#   - the realtime scenario of 50-realtime (1:1 and groups to every device, revoke/edit/read, a client that
#     reconnects to another instance after missing 500 messages and syncs them once each) between instances 1 and
#     2, then between 2 and 3; the chat-room scenario of 87-rooms between instances 1 and 3;
#   - the fault scenarios on their own three instances: `scripts/chaos --quick --nats kill9 pgrestart natsrestart`
#     (kill -9 an instance, restart PostgreSQL, restart NATS; zero acknowledged messages lost or duplicated).
#   PARLEY_E2E_VENV  virtualenv for the clients (default .parley/venv, shared with the other realtime scripts)
set -euo pipefail
# shellcheck source=scripts/lib/e2e.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

venv=$(e2e_realtime_venv)

nats_dir="$E2E_TMP/nats"
nats_start "$nats_dir" "$(free_port)"
stop_nats() { nats_stop "$nats_dir"; }
e2e_on_exit stop_nats
E2E_LOGS+=("$nats_dir/nats.log")
relay=PARLEY_RELAY=$(nats_url "$nats_dir")

db=$(e2e_fresh_db)
limits=(PARLEY_WS_MAX_QUEUED_BYTES=262144 PARLEY_IM_MAX_TEXT_CHARS=100000 PARLEY_IM_SEND_RATE_PER_SECOND=0)
bases=()
pids=()
for _ in 1 2 3; do
    parley_start "$db" "$relay" "${limits[@]}"
    bases+=("$PARLEY_BASE")
    pids+=("$PARLEY_PID")
done

# One app per client run: the clients register fixed usernames.
new_app() {
    local out key
    out=$(DATABASE_URL="$db" PARLEY_MIGRATIONS_DIR="$PARLEY_ROOT/migrations" "$PARLEY_BIN" app create --name "$1") \
        || fail "parley app create failed: $out"
    key=$(awk '$1 == "appKey" { print $2 }' <<<"$out")
    [[ -n $key ]] || fail "no appKey in: $out"
    echo "$key"
}

client_log="$E2E_TMP/cluster-clients.log"
E2E_LOGS+=("$client_log")
timeout 300 "$venv/bin/python" "$PARLEY_ROOT/scripts/e2e/lib/realtime_client.py" "${bases[0]}" "${bases[1]}" \
    "$(new_app e2e-1)" >"$client_log" 2>&1 || fail "realtime client (instances 1 and 2) failed (see cluster-clients.log)"
summary="realtime 1-2: $(tail -n 1 "$client_log")"
timeout 300 "$venv/bin/python" "$PARLEY_ROOT/scripts/e2e/lib/realtime_client.py" "${bases[1]}" "${bases[2]}" \
    "$(new_app e2e-2)" >>"$client_log" 2>&1 || fail "realtime client (instances 2 and 3) failed (see cluster-clients.log)"
summary+="; realtime 2-3: $(tail -n 1 "$client_log")"
timeout 120 "$venv/bin/python" "$PARLEY_ROOT/scripts/e2e/lib/rooms_client.py" "${bases[0]}" "${bases[2]}" \
    "$(new_app e2e-3)" >>"$client_log" 2>&1 || fail "rooms client (instances 1 and 3) failed (see cluster-clients.log)"
summary+="; rooms 1-3: $(tail -n 1 "$client_log")"

# No instance read a relayed message back from the database: each one's relay received events, and none logged a
# failed relay read.
for base in "${bases[@]}"; do
    received=$(curl -fsS "$base/metrics" | awk '$1 == "parley_realtime_cluster_events_received_total" { print $2 }')
    [[ ${received:-0} != 0 ]] || fail "$base received no relayed event"
done
for pid in "${pids[@]}"; do
    PARLEY_PID=$pid
    parley_stop_clean 15
done

out="$E2E_TMP/chaos.out"
E2E_LOGS+=("$out")
started=$SECONDS
PARLEY_BIN=$PARLEY_BIN timeout --kill-after=20 400 "$PARLEY_ROOT/scripts/chaos" --quick --nats kill9 pgrestart \
    natsrestart >"$out" 2>&1 || fail "scripts/chaos --quick --nats failed (its output follows)"
pass "nats-server + three instances: $summary; chaos kill9, pgrestart and natsrestart (quick) in" \
    "$((SECONDS - started)) s: $(grep -c '^#### .* PASS$' "$out") of 3 scenarios PASS"
