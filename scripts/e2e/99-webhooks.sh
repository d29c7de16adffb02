#!/usr/bin/env bash
# Issue 20's webhooks end to end: a real `parley serve` calling a receiver that plays the app's backend
# (scripts/e2e/lib/webhooks/webhooks_flow.py: Python's http.server on 127.0.0.1, stopped and restarted). The CLI
# configures the webhook (`parley app webhook`, with its refusals: an unknown event, a private URL without
# PARLEY_WEBHOOK_ALLOW_PRIVATE); the flow checks signatures, before_send deny/replace/timeout, every after_send across
# an outage in order per conversation, the dead letter and the admin retry, login and logout.
set -euo pipefail
# shellcheck source=scripts/lib/e2e.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

venv=$(e2e_realtime_venv) # the flow shares the seeds' client (scripts/e2e/lib/seeds/client.py), which needs it
db=$(e2e_fresh_db)
parley_start "$db" PARLEY_WEBHOOK_ALLOW_PRIVATE=1 PARLEY_WEBHOOK_MAX_ATTEMPTS=3 PARLEY_WEBHOOK_POLL_MS=50

parley_cli() {
    DATABASE_URL="$db" PARLEY_MIGRATIONS_DIR="$PARLEY_ROOT/migrations" "$PARLEY_BIN" "$@"
}
out=$(parley_cli app create --name webhooks) || fail "parley app create: $out"
app_key=$(awk '$1 == "appKey" { print $2 }' <<<"$out")
app_secret=$(awk '$1 == "appSecret" { print $2 }' <<<"$out")
[[ -n $app_key && -n $app_secret ]] || fail "no appKey/appSecret in: $out"

receiver_port=$(free_port)
url="http://127.0.0.1:$receiver_port/hook"
events=before_send,after_send,after_revoke,login,logout
if out=$(parley_cli app webhook "$app_key" --url "$url" --events after_send,after_sned 2>&1); then
    fail "an unknown event was accepted: $out"
fi
[[ $out == *"unknown webhook event \`after_sned\`"* ]] || fail "the refusal does not name the unknown event: $out"
if out=$(PARLEY_WEBHOOK_ALLOW_PRIVATE=0 parley_cli app webhook "$app_key" --url "$url" --events "$events" 2>&1); then
    fail "a loopback URL was accepted without PARLEY_WEBHOOK_ALLOW_PRIVATE: $out"
fi
[[ $out == *"PARLEY_WEBHOOK_ALLOW_PRIVATE"* ]] || fail "the refusal does not say how to allow it: $out"
out=$(PARLEY_WEBHOOK_ALLOW_PRIVATE=1 parley_cli app webhook "$app_key" --url "$url" --events "$events" \
    --timeout-ms 500 --on-failure allow) || fail "parley app webhook: $out"
[[ $(awk '$1 == "webhookUrl" { print $2 }' <<<"$out") == "$url" ]] || fail "the webhook was not stored: $out"
out=$(parley_cli app describe "$app_key") || fail "parley app describe: $out"
[[ $out == *"webhookEvents   $events"* ]] || fail "describe does not show the webhook: $out"

log_file="$E2E_TMP/webhooks_flow.log"
E2E_LOGS+=("$log_file")
WEBHOOK_BASE=$PARLEY_BASE WEBHOOK_APP_KEY=$app_key WEBHOOK_APP_SECRET=$app_secret WEBHOOK_PORT=$receiver_port \
    timeout --kill-after=5 180 "$venv/bin/python" "$PARLEY_ROOT/scripts/e2e/lib/webhooks/webhooks_flow.py" \
    >"$log_file" 2>&1 || fail "the webhooks flow failed (its log is above)"

parley_stop_clean 15
pass "$(tail -n 1 "$log_file")"
