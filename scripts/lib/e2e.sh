# shellcheck shell=bash
# Helpers for scripts/e2e/*.sh. Source it after `set -euo pipefail`.
#
# Inputs (set by scripts/test; every one has a standalone default):
#   PARLEY_BIN                 binary under test (default: .build/debug/parley)
#   PARLEY_TEST_PG_DIR         cluster directory (default: a throwaway cluster created here and removed on exit)
#   PARLEY_TEST_PG_CTL         scripts/lib/pgctl
#
#   e2e_fresh_db                          create a new database, print its URL
#   parley_start DATABASE_URL [VAR=VALUE...]
#                                         start `$PARLEY_BIN serve --migrate` on a free port (dev routes on, log
#                                         in a temp file); sets PARLEY_PID, PARLEY_PORT, PARLEY_BASE, PARLEY_LOG
#   parley_stop_clean [TIMEOUT]           SIGTERM, then require exit status 0 within TIMEOUT (default 15) seconds
#   http_get URL                          sets HTTP_STATUS and HTTP_BODY (curl --max-time 5; status 000 on error)
#   assert_envelope_ok BODY / assert_envelope_error BODY
#   fail MSG                              print MSG and the logs, exit 1
#   e2e_realtime_venv                     print the virtualenv with the WebSocket client (websocket_venv in common.sh)
#   e2e_on_exit FUNCTION                  register an extra cleanup function (runs in a subshell, before the
#                                         script's own cluster, if any, is removed)
#   e2e_mock_apns PYTHON                  start scripts/lib/mock_apns.py with one provider key; sets APNS_DIR (the
#                                         key is APNS_DIR/AuthKey.p8, requests recorded in APNS_DIR/requests.jsonl),
#                                         APNS_KEY_ID, APNS_TEAM_ID and APNS_ENDPOINT

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

E2E_NAME=$(basename "$0" .sh)
PARLEY_LOG_TAG="e2e $E2E_NAME"
: "${PARLEY_BIN:=$PARLEY_ROOT/.build/debug/parley}"
[[ -x $PARLEY_BIN ]] || die "PARLEY_BIN=$PARLEY_BIN is not an executable (run swift build first)"
: "${PARLEY_TEST_PG_CTL:=$PARLEY_ROOT/scripts/lib/pgctl}"

E2E_TMP=$(mktemp -d "/tmp/parley-e2e-$E2E_NAME.XXXXXX")
chmod 711 "$E2E_TMP"
E2E_OWN_CLUSTER=0
E2E_PIDS=()
E2E_LOGS=()
E2E_EXIT_HOOKS=()

_e2e_cleanup() {
    local status=$? pid hook
    for pid in "${E2E_PIDS[@]}"; do
        kill -KILL "$pid" 2>/dev/null || true
    done
    for hook in "${E2E_EXIT_HOOKS[@]}"; do
        ("$hook") || true
    done
    if ((E2E_OWN_CLUSTER)); then
        pg_cluster_kill "$PARLEY_TEST_PG_DIR" || true
    fi
    rm -rf "$E2E_TMP"
    exit "$status"
}
trap _e2e_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

e2e_on_exit() {
    E2E_EXIT_HOOKS+=("$1")
}

if [[ -z ${PARLEY_TEST_PG_DIR:-} ]]; then
    ensure_apt_packages postgresql postgresql-contrib curl
    PARLEY_TEST_PG_DIR=$E2E_TMP/pg
    E2E_OWN_CLUSTER=1
    pg_cluster_start "$PARLEY_TEST_PG_DIR" "$(free_port)" --fast
fi
export PARLEY_TEST_PG_DIR PARLEY_TEST_PG_CTL
E2E_PG_PORT=$(pg_cluster_port "$PARLEY_TEST_PG_DIR")

fail() {
    local f
    printf '\nFAIL [%s]: %s\n' "$E2E_NAME" "$*" >&2
    for f in "${E2E_LOGS[@]}"; do
        if [[ -s $f ]]; then
            printf -- '----- %s (last 200 lines) -----\n' "$(basename "$f")" >&2
            tail -n 200 "$f" >&2
        fi
    done
    printf -- '----- postgres.log (last 20 lines) -----\n' >&2
    tail -n 20 "$PARLEY_TEST_PG_DIR/log/postgres.log" >&2 2>/dev/null || true
    exit 1
}

pass() {
    printf 'PASS [%s] %s\n' "$E2E_NAME" "$*"
}

e2e_realtime_venv() {
    websocket_venv || fail "pip install websockets failed"
}

e2e_fresh_db() {
    local name="e2e_${E2E_NAME//[^A-Za-z0-9]/_}_$$_$RANDOM"
    pg_createdb "$E2E_PG_PORT" "$name" >/dev/null
    pg_url "$E2E_PG_PORT" "$name"
}

parley_start() {
    local url=$1
    shift
    PARLEY_PORT=$(free_port)
    PARLEY_BASE="http://127.0.0.1:$PARLEY_PORT"
    PARLEY_LOG="$E2E_TMP/parley-$PARLEY_PORT.log"
    # The repository's migrations; an empty directory while there are none (git does not keep empty folders).
    local migrations="$PARLEY_ROOT/migrations"
    if [[ ! -d $migrations ]]; then
        migrations="$E2E_TMP/no-migrations"
        mkdir -p "$migrations"
    fi
    E2E_LOGS+=("$PARLEY_LOG")
    ensure_throwaway_master_key
    env DATABASE_URL="$url" PARLEY_HTTP_HOST=127.0.0.1 PARLEY_HTTP_PORT="$PARLEY_PORT" PARLEY_DEV_ROUTES=1 \
        PARLEY_MIGRATIONS_DIR="$migrations" "$@" \
        "$PARLEY_BIN" serve --migrate </dev/null >>"$PARLEY_LOG" 2>&1 &
    PARLEY_PID=$!
    E2E_PIDS+=("$PARLEY_PID")
    wait_http "$PARLEY_BASE/healthz" 30 "$PARLEY_PID" || fail "parley did not answer /healthz on port $PARLEY_PORT"
}

parley_stop_clean() {
    local timeout=${1:-15} start=$SECONDS status=0
    kill -TERM "$PARLEY_PID" 2>/dev/null || fail "parley (pid $PARLEY_PID) was not running at SIGTERM"
    while kill -0 "$PARLEY_PID" 2>/dev/null; do
        if ((SECONDS - start >= timeout)); then
            kill -KILL "$PARLEY_PID" 2>/dev/null || true
            fail "parley did not exit within ${timeout}s of SIGTERM"
        fi
        sleep 0.1
    done
    wait "$PARLEY_PID" || status=$?
    ((status == 0)) || fail "parley exited with status $status after SIGTERM (expected 0)"
}

http_get() {
    local body_file="$E2E_TMP/body"
    HTTP_STATUS=$(curl -sS -o "$body_file" -w '%{http_code}' --max-time 5 "$1" 2>/dev/null) || true
    [[ -n $HTTP_STATUS ]] || HTTP_STATUS=000
    # shellcheck disable=SC2034  # read by the e2e scripts
    HTTP_BODY=$(cat "$body_file" 2>/dev/null || true)
    rm -f "$body_file"
}

# The JSON envelope {"code":N,"message":...,"data":...}; whitespace-tolerant.
_CODE_ZERO='"code"[[:space:]]*:[[:space:]]*0[[:space:]]*[,}]'
_CODE_NONZERO='"code"[[:space:]]*:[[:space:]]*-?[1-9][0-9]*[[:space:]]*[,}]'

assert_envelope_ok() {
    [[ $1 =~ $_CODE_ZERO ]] || fail "expected an envelope with \"code\":0, got: $1"
}

assert_envelope_error() {
    [[ $1 =~ $_CODE_NONZERO ]] || fail "expected an envelope with a nonzero \"code\", got: $1"
    [[ $1 == *'"message"'* ]] || fail "expected an envelope with a \"message\", got: $1"
}

e2e_mock_apns() {
    local python=$1 pid
    "$python" -c 'import h2, cryptography' 2>/dev/null \
        || fail "the mock APNs needs a Python with h2 and cryptography ($python); scripts/test installs them"
    # One provider key: an APNs .p8 is a PKCS#8 PEM of an EC P-256 key.
    APNS_DIR="$E2E_TMP/apns"
    APNS_KEY_ID=SEEDKEY001
    APNS_TEAM_ID=SEEDTEAM01
    mkdir -p "$APNS_DIR"
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$APNS_DIR/AuthKey.p8" 2>/dev/null \
        || fail "openssl could not make an EC P-256 key"
    openssl pkey -in "$APNS_DIR/AuthKey.p8" -pubout -out "$APNS_DIR/public.pem" 2>/dev/null \
        || fail "openssl pkey -pubout"
    E2E_LOGS+=("$APNS_DIR/mock.log")
    "$python" "$PARLEY_ROOT/scripts/lib/mock_apns.py" --port-file "$APNS_DIR/port" \
        --record "$APNS_DIR/requests.jsonl" --key "$APNS_KEY_ID:$APNS_TEAM_ID:$APNS_DIR/public.pem" \
        >"$APNS_DIR/mock.log" 2>&1 &
    pid=$!
    E2E_PIDS+=("$pid")
    for _ in $(seq 1 300); do
        [[ -s $APNS_DIR/port ]] && break
        kill -0 "$pid" 2>/dev/null || fail "the mock APNs exited: $(cat "$APNS_DIR/mock.log")"
        sleep 0.1
    done
    [[ -s $APNS_DIR/port ]] || fail "the mock APNs did not start within 30 s"
    APNS_ENDPOINT="http://127.0.0.1:$(cat "$APNS_DIR/port")"
    touch "$APNS_DIR/requests.jsonl"
}
