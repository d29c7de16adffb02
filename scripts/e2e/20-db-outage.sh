#!/usr/bin/env bash
# PostgreSQL outage: /readyz turns 503 (envelope, nonzero code) quickly while parley stays up, and returns to 200
# once the cluster is back, without restarting parley.
set -euo pipefail
# shellcheck source=scripts/lib/e2e.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

# Whatever happens, leave the shared cluster running for the scripts that follow.
restart_cluster() { pg_cluster_start "$PARLEY_TEST_PG_DIR" >/dev/null; }
e2e_on_exit restart_cluster

db_url=$(e2e_fresh_db)
# A table shaped like pgbench's, so the DB route (/bench/accounts/{aid}) has a row to read.
psql -X -q -v ON_ERROR_STOP=1 "$db_url" \
    -c "CREATE TABLE pgbench_accounts (aid integer PRIMARY KEY, bid integer, abalance integer, filler char(84))" \
    -c "INSERT INTO pgbench_accounts VALUES (1, 1, 42, '')" >/dev/null
parley_start "$db_url"

http_get "$PARLEY_BASE/bench/accounts/1"
[[ $HTTP_STATUS == 200 && $HTTP_BODY == *'"abalance":42'* ]] || fail "DB route before the outage: HTTP $HTTP_STATUS, body: $HTTP_BODY"

http_get "$PARLEY_BASE/readyz"
[[ $HTTP_STATUS == 200 ]] || fail "/readyz before the outage: HTTP $HTTP_STATUS, body: $HTTP_BODY"
assert_envelope_ok "$HTTP_BODY"

"$PARLEY_TEST_PG_CTL" kill "$PARLEY_TEST_PG_DIR"
killed_at=$(date +%s%N)

# Within ~5 s (and every request itself within curl's 5 s limit), /readyz must say 503.
seen=""
while (($(date +%s%N) - killed_at < 6000000000)); do
    http_get "$PARLEY_BASE/readyz"
    if [[ $HTTP_STATUS == 503 ]]; then
        seen=1
        break
    fi
    [[ $HTTP_STATUS == 200 ]] || fail "/readyz during the outage: HTTP $HTTP_STATUS (expected 200 or 503 within 5 s of curl's --max-time), body: $HTTP_BODY"
    sleep 0.2
done
[[ -n $seen ]] || fail "/readyz still not 503 six seconds after the cluster was killed"
down_ms=$((($(date +%s%N) - killed_at) / 1000000))
assert_envelope_error "$HTTP_BODY"
kill -0 "$PARLEY_PID" 2>/dev/null || fail "parley died when PostgreSQL went away"

# Asking again must stay fast and 503, and /healthz (liveness) must not depend on the database.
t0=$(date +%s%N)
http_get "$PARLEY_BASE/readyz"
t_ms=$((($(date +%s%N) - t0) / 1000000))
[[ $HTTP_STATUS == 503 ]] || fail "/readyz during the outage (2nd): HTTP $HTTP_STATUS, body: $HTTP_BODY"
http_get "$PARLEY_BASE/bench/accounts/1"
[[ $HTTP_STATUS == 503 && $HTTP_BODY == *'"code":1504'* ]] || fail "DB route during the outage: HTTP $HTTP_STATUS, body: $HTTP_BODY"
http_get "$PARLEY_BASE/healthz"
[[ $HTTP_STATUS == 200 ]] || fail "/healthz during the outage: HTTP $HTTP_STATUS, body: $HTTP_BODY"

"$PARLEY_TEST_PG_CTL" start "$PARLEY_TEST_PG_DIR"
restarted_at=$(date +%s%N)
ok=""
while (($(date +%s%N) - restarted_at < 20000000000)); do
    http_get "$PARLEY_BASE/readyz"
    if [[ $HTTP_STATUS == 200 ]]; then
        ok=1
        break
    fi
    sleep 0.25
done
[[ -n $ok ]] || fail "/readyz not back to 200 within 20 s after PostgreSQL restarted (last: HTTP $HTTP_STATUS $HTTP_BODY)"
up_ms=$((($(date +%s%N) - restarted_at) / 1000000))
assert_envelope_ok "$HTTP_BODY"
http_get "$PARLEY_BASE/bench/accounts/1"
[[ $HTTP_STATUS == 200 && $HTTP_BODY == *'"abalance":42'* ]] || fail "DB route after the outage: HTTP $HTTP_STATUS, body: $HTTP_BODY"
kill -0 "$PARLEY_PID" 2>/dev/null || fail "parley died during the outage"

parley_stop_clean 15
pass "503 after ${down_ms} ms (a 503 answer took ${t_ms} ms), 200 again ${up_ms} ms after restart, SIGTERM -> exit 0"
