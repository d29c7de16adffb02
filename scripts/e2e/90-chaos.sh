#!/usr/bin/env bash
# Fault tests, the short version (issue 8): `scripts/chaos --quick kill9 pgrestart abuse` against the binary under
# test: SIGKILL of one of two instances while clients send, PostgreSQL stopped and crashed under load, slowloris /
# oversized headers / a connection flood / a WebSocket that never reads beside a well-behaved client. Every
# acknowledged message must be stored once and reach its recipient. scripts/chaos brings its own durable cluster.
# The full run with figures (and the 5-minute soak) is `scripts/chaos` by hand; see BENCHMARKS.md.
set -euo pipefail
# shellcheck source=scripts/lib/e2e.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

out="$E2E_TMP/chaos.out"
E2E_LOGS+=("$out")
started=$SECONDS
PARLEY_BIN=$PARLEY_BIN timeout --kill-after=20 300 "$PARLEY_ROOT/scripts/chaos" --quick kill9 pgrestart abuse \
    >"$out" 2>&1 || fail "scripts/chaos --quick failed (its output follows)"
pass "kill9, pgrestart and abuse (quick) in $((SECONDS - started)) s: $(grep -c '^#### .* PASS$' "$out") of 3 scenarios PASS"
