#!/usr/bin/env bash
# Smoke test: start, health/readiness/metrics/404 envelopes, `parley healthcheck` (the image's HEALTHCHECK),
# graceful SIGTERM.
set -euo pipefail
# shellcheck source=scripts/lib/e2e.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

parley_start "$(e2e_fresh_db)"

http_get "$PARLEY_BASE/healthz"
[[ $HTTP_STATUS == 200 ]] || fail "/healthz: HTTP $HTTP_STATUS (expected 200), body: $HTTP_BODY"
assert_envelope_ok "$HTTP_BODY"

http_get "$PARLEY_BASE/readyz"
[[ $HTTP_STATUS == 200 ]] || fail "/readyz: HTTP $HTTP_STATUS (expected 200), body: $HTTP_BODY"
assert_envelope_ok "$HTTP_BODY"

http_get "$PARLEY_BASE/no/such/path-$RANDOM"
[[ $HTTP_STATUS == 404 ]] || fail "unknown path: HTTP $HTTP_STATUS (expected 404), body: $HTTP_BODY"
assert_envelope_error "$HTTP_BODY"

http_get "$PARLEY_BASE/metrics"
[[ $HTTP_STATUS == 200 ]] || fail "/metrics: HTTP $HTTP_STATUS (expected 200)"
[[ $HTTP_BODY == *parley_http_requests_total* ]] || fail "/metrics lacks parley_http_requests_total: ${HTTP_BODY:0:2000}"

# The container HEALTHCHECK: exit 0 while the server answers, 1 once nothing listens.
PARLEY_HTTP_HOST=0.0.0.0 PARLEY_HTTP_PORT=$PARLEY_PORT "$PARLEY_BIN" healthcheck \
    || fail "parley healthcheck against a running server exited $?"

parley_stop_clean 15
healthcheck_status=0
PARLEY_HTTP_HOST=127.0.0.1 PARLEY_HTTP_PORT=$PARLEY_PORT "$PARLEY_BIN" healthcheck 2>/dev/null || healthcheck_status=$?
[[ $healthcheck_status == 1 ]] || fail "parley healthcheck with no server exited $healthcheck_status (expected 1)"
pass "healthz, readyz, 404 envelope, metrics, parley healthcheck (up: 0, down: 1), SIGTERM -> exit 0"
