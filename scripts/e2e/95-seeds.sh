#!/usr/bin/env bash
# The five seed clients of ../shared/seeds (issue 17), each driven at the wire level exactly as its document's client
# does (its field names, its types, its order of calls) against the real binary, every answer decoded with the
# client's own types (scripts/e2e/lib/seeds/wire.py: a wrong type fails as a Swift Decodable would):
#   000 OpenIM-based app whose backend signs IM logins (tb_ prefixed IM ids, silent renewal, account_conflict,
#       custom file messages, push-token binding by the business uid, badge), 001 XuqmGroup SDK (one Bearer token,
#       ImClient send/revoke, ImMessage, push, update check, upload), 002 RTM-style SwiftUI IM (history paged
#       newest first, time windows), 003 TIMPush VoIP (the `ext` JSON string of VoIP pushes), 004 Bmob IM
#       (accounts, conversations, paging back, unread).
# One app per seed; pushes go to scripts/lib/mock_apns.py (HTTP/2, ES256 checks), set with `parley app push
# --endpoint` as an operator would. Every seed runs even when an earlier one fails; each prints one summary line.
#   PARLEY_E2E_VENV          virtualenv with `websockets` (default .parley/venv)
#   PARLEY_TEST_PUSH_PYTHON  a Python with h2 and cryptography for the mock APNs (scripts/test sets it)
#   SEEDS                    which seeds to run (default "000 001 002 003 004")
set -euo pipefail
# shellcheck source=scripts/lib/e2e.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

venv=$(e2e_realtime_venv)
seeds_dir="$PARLEY_ROOT/scripts/e2e/lib/seeds"
push_python=${PARLEY_TEST_PUSH_PYTHON:-$venv/bin/python}
e2e_mock_apns "$push_python"

db=$(e2e_fresh_db)
# Push workers poll every 50 ms, so a push reaches the mock within a fraction of a second.
# Unreferenced files are swept after 5 s (seed 000 checks that custom messages protect theirs). A probed socket has
# 3 s to answer (seed 001 opens more sockets of one session than the probe limit, and checks that they all stay).
parley_start "$db" PARLEY_PUSH_POLL_MS=50 PARLEY_FILES_DIR="$E2E_TMP/files" PARLEY_FILES_SWEEP_GRACE_SECONDS=5 \
    PARLEY_FILES_SWEEP_INTERVAL_SECONDS=1 PARLEY_WS_PROBE_SECONDS=3

parley_cli() {
    DATABASE_URL="$db" PARLEY_MIGRATIONS_DIR="$PARLEY_ROOT/migrations" "$PARLEY_BIN" "$@"
}

# Creates the seed's app (and, with a bundle id, enables its pushes to the mock); sets APP_KEY and APP_SECRET.
seed_app() {
    local name=$1 bundle=${2:-} out
    out=$(parley_cli app create --name "$name") || fail "parley app create --name $name: $out"
    APP_KEY=$(awk '$1 == "appKey" { print $2 }' <<<"$out")
    APP_SECRET=$(awk '$1 == "appSecret" { print $2 }' <<<"$out")
    [[ -n $APP_KEY && -n $APP_SECRET ]] || fail "no appKey/appSecret in: $out"
    if [[ -n $bundle ]]; then
        out=$(parley_cli app push "$APP_KEY" --apns-key-file "$APNS_DIR/AuthKey.p8" --key-id "$APNS_KEY_ID" \
            --team-id "$APNS_TEAM_ID" --bundle-id "$bundle" --endpoint "$APNS_ENDPOINT" --preview full --enable) \
            || fail "parley app push $APP_KEY: $out"
    fi
}

summaries=()
failed=()
run_seed() {
    local seed=$1 bundle=${2:-} log="$E2E_TMP/seed_$1.log"
    seed_app "seed-$seed" "$bundle"
    E2E_LOGS+=("$log")
    log "seed $seed"
    if SEEDS_BASE=$PARLEY_BASE SEEDS_APP_KEY=$APP_KEY SEEDS_APP_SECRET=$APP_SECRET \
        SEEDS_APNS_RECORD="$APNS_DIR/requests.jsonl" SEEDS_DATABASE_URL="$db" \
        timeout --kill-after=5 180 "$venv/bin/python" "$seeds_dir/seed_$seed.py" >"$log" 2>&1; then
        summaries+=("$seed: $(tail -n 1 "$log")")
    else
        failed+=("$seed")
        printf -- '----- seed %s -----\n%s\n' "$seed" "$(tail -n 20 "$log")" >&2
    fi
}

for seed in ${SEEDS:-000 001 002 003 004}; do
    case $seed in
        000) run_seed 000 com.example.tongban ;;
        001) run_seed 001 com.example.xuqm ;;
        002) run_seed 002 ;;
        003) run_seed 003 com.example.timpush ;;
        004) run_seed 004 ;;
        *) fail "unknown seed $seed" ;;
    esac
done

((${#failed[@]} == 0)) || fail "seed flows failed: ${failed[*]} (their last lines above)"
parley_stop_clean 15
pass "$(printf '%s; ' "${summaries[@]}")"
