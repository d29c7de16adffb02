#!/usr/bin/env bash
# Smoke test: start, health/readiness/metrics/404 envelopes, graceful SIGTERM.
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

parley_stop_clean 15
pass "healthz, readyz, 404 envelope, metrics, SIGTERM -> exit 0"
