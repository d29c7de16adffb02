#!/usr/bin/env bash
# Issue 18's security review, replayed against the real binary: each live probe that found a hole (an HTML upload
# served inline, an avatar making a revoked file public, consent renewing tokens, a lockout usable against the
# owner, 403/404 telling conversations apart, ...) must now see the safe answer (scripts/e2e/lib/security/probes.py),
# and the deployment checks hold: a server behind proxies refuses to start without PARLEY_PUBLIC_URL, /metrics
# wants its token, the test cluster wants a password.
set -euo pipefail
# shellcheck source=scripts/lib/e2e.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

venv=$(e2e_realtime_venv)
db=$(e2e_fresh_db)

# Behind a proxy that may terminate TLS, the public origin must be spelled out.
refusal=$(DATABASE_URL="$db" PARLEY_MIGRATIONS_DIR="$PARLEY_ROOT/migrations" PARLEY_TRUSTED_PROXIES=10.0.0.1 \
    PARLEY_HTTP_PORT=1 timeout 20 "$PARLEY_BIN" serve 2>&1) && fail "serve started behind proxies without PARLEY_PUBLIC_URL"
grep -q "PARLEY_PUBLIC_URL" <<<"$refusal" || fail "serve refused without naming PARLEY_PUBLIC_URL: $refusal"

# The cluster scripts/ made accepts no connection without the password.
if env -u PGPASSWORD "$(pg_bin)/psql" -X -w -h 127.0.0.1 -p "$E2E_PG_PORT" -U parley -d postgres -tAc 'select 1' \
    >/dev/null 2>&1; then
    fail "the test cluster accepted a connection without a password"
fi

metrics_token=e2e-metrics-token-0123456789
parley_start "$db" PARLEY_FILES_DIR="$E2E_TMP/files" PARLEY_METRICS_TOKEN="$metrics_token" \
    PARLEY_FILES_USER_QUOTA_BYTES=1048576 PARLEY_HTTP_BODY_GRACE_SECONDS=1 PARLEY_IM_SEND_RATE_PER_SECOND=0.0167 PARLEY_IM_SEND_BURST=10
http_get "$PARLEY_BASE/metrics"
[[ $HTTP_STATUS == 401 ]] || fail "/metrics without its token answered $HTTP_STATUS"
metrics=$(curl -sS --max-time 5 -H "Authorization: Bearer $metrics_token" "$PARLEY_BASE/metrics") \
    || fail "/metrics with its token failed"
grep -q '^parley_' <<<"$metrics" || fail "/metrics with its token: ${metrics:0:200}"

out=$(DATABASE_URL="$db" PARLEY_MIGRATIONS_DIR="$PARLEY_ROOT/migrations" "$PARLEY_BIN" app create --name e2e-security) \
    || fail "parley app create failed: $out"
app_key=$(awk '$1 == "appKey" { print $2 }' <<<"$out")
log_file="$E2E_TMP/probes.log"
E2E_LOGS+=("$log_file")
SEEDS_BASE=$PARLEY_BASE SEEDS_APP_KEY=$app_key timeout --kill-after=5 180 \
    "$venv/bin/python" "$PARLEY_ROOT/scripts/e2e/lib/security/probes.py" >"$log_file" 2>&1 \
    || fail "a security probe failed: $(tail -n 5 "$log_file")"
parley_stop_clean 15
pass "$(paste -sd';' "$log_file")"
