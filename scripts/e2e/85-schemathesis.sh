#!/usr/bin/env bash
# openapi.yaml against the live server: the spec validates as OpenAPI 3.1 (openapi-spec-validator), then a bounded,
# seeded schemathesis pass (PyPI) runs every documented operation with valid credentials and seeded data under all
# of schemathesis' checks (`--checks all`): no 5xx; every status code, Content-Type, header and body as documented;
# schema-valid requests accepted and schema-violating ones refused (so the schema says exactly what the server
# takes); a missing required header or credential refused with 401 where it is the credential; authentication
# enforced; no resource used after its deletion.
#   PARLEY_ST_VENV          virtualenv for schemathesis and the validator (default .parley/venv-schemathesis: apart
#                           from the shared .parley/venv, so that schemathesis' many dependencies cannot move the
#                           versions moto, h2 and websockets run with)
#   PARLEY_ST_MAX_EXAMPLES  examples per operation and phase (default 10)
#   PARLEY_ST_SEED          hypothesis seed (default 8; fixed so that a failure reproduces)
#   PARLEY_ST_TIMEOUT       hard bound on the run in seconds (default 300; it takes one to two minutes)
#   PARLEY_ST_LOG           keep schemathesis' output in this file (default: the temp dir, removed at exit)
#   PARLEY_ST_REPORT_DIR    also write schemathesis' NDJSON report (every request and response) there
# The hooks (scripts/e2e/lib/schemathesis_hooks.py) sign the server-to-server calls, keep the fuzzing user's session
# alive, and keep valid cases within the rules openapi.yaml can only state in prose (between two fields, or against
# a resource's state); scripts/e2e/lib/schemathesis_seed.py creates the data the operations are pointed at.
set -euo pipefail
# shellcheck source=scripts/lib/e2e.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

st_version=4.32.5
validator_version=0.9.0
venv=${PARLEY_ST_VENV:-$PARLEY_ROOT/.parley/venv-schemathesis}
installed=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("schemathesis"), m.version("openapi-spec-validator"))' \
    2>/dev/null || true)
if [[ $installed != "$st_version $validator_version" ]]; then
    ensure_apt_packages python3-venv
    log "installing schemathesis $st_version and openapi-spec-validator $validator_version into $venv"
    [[ -x $venv/bin/python ]] || { mkdir -p "$(dirname "$venv")" && python3 -m venv "$venv"; }
    "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$st_version" \
        "openapi-spec-validator==$validator_version" || fail "pip install schemathesis==$st_version failed"
fi

spec="$PARLEY_ROOT/openapi.yaml"
"$venv/bin/openapi-spec-validator" "$spec" >"$E2E_TMP/validator.log" 2>&1 \
    || fail "openapi.yaml is not valid OpenAPI 3.1: $(cat "$E2E_TMP/validator.log")"

db=$(e2e_fresh_db)
# Auth rate limits off: the fuzzer registers and logs in far more often than 120 times a minute from one address,
# and the hooks' own logins must not be refused. (The limits have their own tests: RateLimitTests.)
parley_start "$db" PARLEY_FILES_DIR="$E2E_TMP/files" PARLEY_AUTH_RATE_PER_MINUTE=0 PARLEY_AUTH_ACCOUNT_RATE_PER_MINUTE=0 \
    PARLEY_AUTH_REGISTRATIONS_PER_HOUR=0 PARLEY_IM_SEND_RATE_PER_SECOND=0 PARLEY_FILES_UPLOADS_PER_MINUTE=0 \
    PARLEY_TURN_SECRET=st-turn-secret PARLEY_TURN_URIS=turn:127.0.0.1:3478

# Sessions are never displaced in this app: schemathesis reuses values it saw in answers (user ids, platforms), so a
# signed imLogin or a login could name the fuzzing user on its platform, end its session and turn every later case
# into a 401. (Displacement has its own tests: AuthFlowTests, AccountConflictTests.)
app_out=$(DATABASE_URL="$db" PARLEY_MIGRATIONS_DIR="$PARLEY_ROOT/migrations" "$PARLEY_BIN" app create \
    --name e2e-schemathesis --session-policy unlimited) || fail "parley app create failed: $app_out"
app_key=$(awk '$1 == "appKey" { print $2 }' <<<"$app_out")
app_secret=$(awk '$1 == "appSecret" { print $2 }' <<<"$app_out")
[[ -n $app_key && -n $app_secret ]] || fail "no appKey/appSecret in: $app_out"

seed_json=$("$venv/bin/python" "$PARLEY_ROOT/scripts/e2e/lib/schemathesis_seed.py" "$PARLEY_BASE" "$app_key" "$app_secret") \
    || fail "seeding failed: $seed_json"
seeded() { "$venv/bin/python" -c "import json, sys; v = json.load(sys.stdin)['$1']; print(json.dumps(v) if isinstance(v, list) else v)" <<<"$seed_json"; }
seed_file="$E2E_TMP/seed.json"
printf '%s\n' "$seed_json" >"$seed_file"

config="$E2E_TMP/schemathesis.toml"
cat >"$config" <<EOF
# No crash cache and no example database: every run starts from the seed alone (they would live in the working
# directory and be replayed by the next run).
cache = { enabled = false }
# Every check runs (each is enabled unless said otherwise; max_response_time needs a limit): from here rather than
# with \`--checks all\`, which would outrank the per-operation exceptions below (CLI options override the file).
hooks = "$PARLEY_ROOT/scripts/e2e/lib/schemathesis_hooks.py"

[auth.openapi.bearerAccess]
bearer = "$(seeded accessToken)"

[auth.openapi.bearerIM]
bearer = "$(seeded imToken)"

[auth.openapi.appKey]
api_key = "$app_key"

# A placeholder the hooks replace with the request's real signature: configured, so that schemathesis knows these
# credentials are valid and its authentication probes (no signature, a wrong one) go out unsigned.
[auth.openapi.signedRequest]
api_key = "$(printf '0%.0s' {1..64})"

# 413 is a refusal too (the body over the route's limit); the other statuses are schemathesis' defaults.
[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx"]

# Seeded values, drawn instead of a generated one in most cases so that operations reach their handlers' success
# paths; the other cases stay generated (validation and not-found paths).
[dictionaries.conversations]
values = $(seeded conversationIds)

[dictionaries.messages]
values = $(seeded messageIds)

[dictionaries.groups]
values = ["$(seeded groupId)"]

[dictionaries.users]
values = $(seeded userIds)

[dictionaries.recipients]
values = $(seeded recipients)

[dictionaries.releases]
values = [$(seeded releaseId)]

[dictionaries.objectKey]
values = ["$(seeded objectKey)"]

[dictionaries.exp]
values = ["$(seeded fileExp)"]

[dictionaries.sig]
values = ["$(seeded fileSig)"]

[dictionaries.calls]
values = $(seeded callIds)

[dictionaries.rooms]
values = $(seeded roomIds)

[dictionaries.pushToken]
values = ["$(seeded pushToken)"]

[dictionaries.appKey]
values = ["$app_key"]

[dictionaries.username]
values = ["$(seeded throwawayUsername)"]

[dictionaries.password]
values = ["$(seeded password)"]

# The WebSocket upgrade: 101 is its success; without \`Upgrade: websocket\` or \`Sec-WebSocket-Version: 13\` the answer is
# 426 Upgrade Required (RFC 9110 §15.5.22, RFC 6455 §4.2.2), a refusal like any 4xx.
[[operations]]
include-path = "/ws"
checks = { not_a_server_error = { expected-statuses = ["101", "2xx", "3xx", "4xx"] }, positive_data_acceptance = { expected-statuses = ["101", "2xx", "3xx", "401", "403", "404", "409", "429", "5xx"] }, negative_data_rejection = { expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "426", "428", "429", "5xx"] }, missing_required_header = { expected-statuses = ["400", "401", "403", "406", "415", "422", "426"] } }

[[operations]]
include-path-regex = '^/api/calls/\{callId\}'
parameters = { "path.callId" = { dictionary = "calls", probability = 0.7 } }

[[operations]]
include-path-regex = '^/api/im/conversations/\{id\}'
parameters = { "path.id" = { dictionary = "conversations", probability = 0.7 } }
# Deleting a conversation takes it off the caller's list and resets the caller's view of it; the conversation stays
# (openapi.yaml: GET answers "also one they deleted from their list", and the next message brings it back), so
# answers after the DELETE are not a use after free.
checks = { use_after_free = { enabled = false } }

[[operations]]
include-path-regex = '^/api/im/messages/\{id\}'
parameters = { "path.id" = { dictionary = "messages", probability = 0.7 } }

[[operations]]
include-path-regex = '^/api/im/groups/\{id\}'
parameters = { "path.id" = { dictionary = "groups", probability = 0.7 }, "path.userId" = { dictionary = "users", probability = 0.7 } }

[[operations]]
include-path-regex = '^/api/users/\{id\}'
parameters = { "path.id" = { dictionary = "users", probability = 0.7 } }

[[operations]]
include-path-regex = '^/api/(im|admin)/rooms/\{id\}'
parameters = { "path.id" = { dictionary = "rooms", probability = 0.7 } }

[[operations]]
include-path-regex = '^/api/admin/releases/\{id\}'
parameters = { "path.id" = { dictionary = "releases", probability = 0.7 } }

# Signed download URLs: the key, expiry and signature of the seeded upload, each drawn independently, so that some
# cases are the whole valid URL (200, 206, 304, 416) and the others an altered one (400, 403, 404).
[[operations]]
include-operation-id = "downloadFile"
parameters = { "path.objectKey" = { dictionary = "objectKey", probability = 0.8 }, "query.exp" = { dictionary = "exp", probability = 0.8 }, "query.sig" = { dictionary = "sig", probability = 0.8 } }

# Messages go to the seeded users and group, and reference the seeded file.
[[operations]]
include-operation-id = "sendMessage"
parameters = { "body.toId" = { dictionary = "recipients", probability = 0.8 }, "body.content.objectKey" = { dictionary = "objectKey", probability = 0.8 } }

[[operations]]
include-operation-id = "unbindPushToken"
parameters = { "path.token" = { dictionary = "pushToken", probability = 0.5 } }

# imLogin's body names the signing app again; logins use the account the hooks also log in as.
[[operations]]
include-operation-id = "imLogin"
parameters = { "body.appKey" = { dictionary = "appKey", probability = 0.8 } }

[[operations]]
include-operation-id = "login"
parameters = { "body.username" = { dictionary = "username", probability = 0.7 }, "body.password" = { dictionary = "password", probability = 0.7 } }
EOF

report=${PARLEY_ST_LOG:-$E2E_TMP/schemathesis.log}
E2E_LOGS+=("$report")
started=$SECONDS
status=0
(cd "$E2E_TMP" && PARLEY_ST_BASE=$PARLEY_BASE PARLEY_ST_APP_KEY=$app_key PARLEY_ST_APP_SECRET=$app_secret \
    PARLEY_ST_TOKEN=$(seeded accessToken) PARLEY_ST_PUSH_TOKEN=$(seeded pushToken) \
    PARLEY_ST_THROWAWAY_USER=$(seeded throwawayUsername) PARLEY_ST_THROWAWAY_PASSWORD=$(seeded password) \
    PARLEY_ST_SEED_FILE=$seed_file \
    timeout --kill-after=10 "${PARLEY_ST_TIMEOUT:-300}" \
    "$venv/bin/schemathesis" --no-color --config-file "$config" run "$spec" --url "$PARLEY_BASE" \
    --max-examples "${PARLEY_ST_MAX_EXAMPLES:-10}" --seed "${PARLEY_ST_SEED:-8}" --workers 1 \
    --generation-database none --request-timeout 30 \
    ${PARLEY_ST_REPORT_DIR:+--report ndjson --report-dir "$PARLEY_ST_REPORT_DIR"} \
    >"$report" 2>&1) || status=$?
elapsed=$((SECONDS - started))
((status != 124 && status != 137)) || fail "schemathesis did not finish within ${PARLEY_ST_TIMEOUT:-300}s"
((status == 0)) || fail "schemathesis found problems (exit $status after ${elapsed}s; see schemathesis.log, and rerun with PARLEY_ST_LOG=FILE for all of it)"

# The download route's conditional and range answers, which need the file's ETag and size (see the script).
downloads_log="$E2E_TMP/downloads.log"
E2E_LOGS+=("$downloads_log")
"$venv/bin/python" "$PARLEY_ROOT/scripts/e2e/lib/schemathesis_downloads.py" "$spec" "$(seeded fileURL)" \
    >"$downloads_log" 2>&1 || fail "a download example does not conform to openapi.yaml (see downloads.log)"

# "Tested: 54", "2878 generated, 2878 passed", "... in 61.72s ===".
summary="$(grep -oE 'Tested: [0-9]+' "$report") operations, $(grep -oE '[0-9]+ generated, [^$]*' "$report" | tail -n 1)"
parley_stop_clean 15
pass "openapi.yaml valid; schemathesis $st_version in ${elapsed}s: $summary; $(tail -n 1 "$downloads_log")"
