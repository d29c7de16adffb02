#!/usr/bin/env bash
# docker/nginx.conf (the compose scale profile) in front of two `parley serve` instances on one database, run
# with Debian's nginx: the upstreams point at the two instances on loopback and `resolve` (nginx >= 1.27.3, the
# image has 1.30) is dropped when this nginx is older; everything else is the file as shipped. The realtime
# client's main phase then runs entirely through nginx (REST, WebSocket upgrades on /ws, delivery between
# clients that land on different instances, reconnect and sync), and the X-Request-Id mapping is checked.
#   PARLEY_E2E_VENV  virtualenv for the client (default .parley/venv; 50-realtime.sh installs websockets there)
set -euo pipefail
# shellcheck source=scripts/lib/e2e.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

ensure_apt_packages nginx
venv=$(e2e_realtime_venv)

db=$(e2e_fresh_db)
# No send rate: the client sends hundreds of messages at once to check ordering across instances.
parley_start "$db" PARLEY_IM_SEND_RATE_PER_SECOND=0
first_port=$PARLEY_PORT
first_pid=$PARLEY_PID
parley_start "$db" PARLEY_IM_SEND_RATE_PER_SECOND=0
second_port=$PARLEY_PORT

prefix="$E2E_TMP/nginx"
mkdir -p "$prefix"
nginx_port=$(free_port)
version=$(nginx -v 2>&1 | sed -n 's|.*nginx/\([0-9.]*\).*|\1|p')
# The scale profile's instance list, pointed at the two local instances, in place of the file compose mounts.
sed -E -e "s/server parley:8080/server 127.0.0.1:$first_port/" -e "s/server parley-2:8080/server 127.0.0.1:$second_port/" \
    "$PARLEY_ROOT/docker/nginx-upstream-scale.conf" >"$prefix/parley-upstream.conf"
sed -E -e "s|include /etc/nginx/parley-upstream.conf;|include $prefix/parley-upstream.conf;|" \
    -e "s/listen 8080;/listen 127.0.0.1:$nginx_port;/" "$PARLEY_ROOT/docker/nginx.conf" >"$prefix/nginx.conf"
if [[ $(printf '%s\n1.27.3\n' "$version" | sort -V | head -1) != 1.27.3 ]]; then
    sed -i -E 's/ resolve / /' "$prefix/parley-upstream.conf"
fi
nginx -p "$prefix" -e "$prefix/error.log" -c "$prefix/nginx.conf" -g "daemon off; pid $prefix/nginx.pid;" \
    </dev/null >"$prefix/stdout.log" 2>"$prefix/stderr.log" &
nginx_pid=$!
E2E_PIDS+=("$nginx_pid")
E2E_LOGS+=("$prefix/stderr.log" "$prefix/error.log")
base="http://127.0.0.1:$nginx_port"
wait_http "$base/nginx-health" 20 "$nginx_pid" || fail "nginx did not start with docker/nginx.conf"

http_get "$base/healthz"
[[ $HTTP_STATUS == 200 ]] || fail "/healthz through nginx: HTTP $HTTP_STATUS, body: $HTTP_BODY"
assert_envelope_ok "$HTTP_BODY"
# A client's plain request id passes through; without one, nginx's $request_id reaches Parley and comes back.
own=$(curl -sS -o /dev/null -D - -H 'X-Request-Id: e2e-nginx-1' "$base/healthz" | tr -d '\r' \
    | awk -F': ' 'tolower($1) == "x-request-id" { print $2 }')
[[ $own == e2e-nginx-1 ]] || fail "X-Request-Id through nginx: got '$own', expected e2e-nginx-1"
generated=$(curl -sS -o /dev/null -D - "$base/healthz" | tr -d '\r' | awk -F': ' 'tolower($1) == "x-request-id" { print $2 }')
[[ $generated =~ ^[0-9a-f]{32}$ ]] || fail "X-Request-Id through nginx without one: got '$generated' (nginx's \$request_id)"

app_out=$(DATABASE_URL="$db" PARLEY_MIGRATIONS_DIR="$PARLEY_ROOT/migrations" "$PARLEY_BIN" app create --name e2e-nginx) \
    || fail "parley app create failed: $app_out"
app_key=$(awk '$1 == "appKey" { print $2 }' <<<"$app_out")
[[ -n $app_key ]] || fail "no appKey in: $app_out"

client_log="$E2E_TMP/realtime-client.log"
E2E_LOGS+=("$client_log")
"$venv/bin/python" "$PARLEY_ROOT/scripts/e2e/lib/realtime_client.py" "$base" "$base" "$app_key" \
    >"$client_log" 2>&1 || fail "realtime client through nginx failed (see realtime-client.log)"
summary=$(tail -n 1 "$client_log")

# Both instances served API requests, which only nginx sent.
for log_file in "$E2E_TMP/parley-$first_port.log" "$E2E_TMP/parley-$second_port.log"; do
    grep -q '"path":"/api/' "$log_file" || fail "$(basename "$log_file") has no API request: nginx used one instance"
done

kill -TERM "$nginx_pid" 2>/dev/null || true
wait "$nginx_pid" 2>/dev/null || true
parley_stop_clean 15
PARLEY_PID=$first_pid
parley_stop_clean 15
pass "docker/nginx.conf (nginx $version) over two instances: $summary"
