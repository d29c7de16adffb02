#!/usr/bin/env bash
# Issue 22's end-to-end line: message search through `parley serve` on a fresh database (migrations/0031 and 0037
# applied by --migrate; messages are indexed off the send path). Alice writes to Bob in English, in Chinese and in rich
# text, then revokes one message once it is searchable; Bob's search finds the English word and the Chinese phrase,
# never the revoked message; Carol, in neither conversation, finds
# nothing; paging by `nextCursor` returns each match once, newest first.
set -euo pipefail
# shellcheck source=scripts/lib/e2e.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

db=$(e2e_fresh_db)
parley_start "$db"
out=$(DATABASE_URL="$db" PARLEY_MIGRATIONS_DIR="$PARLEY_ROOT/migrations" "$PARLEY_BIN" app create --name e2e-search) \
    || fail "parley app create: $out"
app_key=$(awk '$1 == "appKey" { print $2 }' <<<"$out")
[[ -n $app_key ]] || fail "no appKey in: $out"

log_file="$E2E_TMP/search.log"
E2E_LOGS+=("$log_file")
timeout --kill-after=5 120 python3 - "$PARLEY_BASE" "$app_key" >"$log_file" 2>&1 <<'PY' || fail "the search flow failed"
import json
import time, sys, urllib.error, urllib.parse, urllib.request
base, app_key = sys.argv[1], sys.argv[2]

def call(method, path, body=None, token=None, app=False):
    headers = {"Content-Type": "application/json"}
    if token: headers["Authorization"] = f"Bearer {token}"
    if app: headers["X-App-Key"] = app_key
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)

def register(name):
    status, body = call("POST", "/api/auth/register",
                        {"username": name, "password": "e2e password 1", "platform": "ios"}, app=True)
    assert status == 201 or status == 200, (status, body)
    return body["data"]["user"]["id"], body["data"]["accessToken"]

def send(token, to, content, msg_type="text"):
    status, body = call("POST", "/api/im/messages",
                        {"toId": to, "chatType": "single", "msgType": msg_type, "content": content}, token=token)
    assert status in (200, 201), (status, body)
    return body["data"]["id"]

def search(token, q, extra=""):
    status, body = call("GET", "/api/im/search?q=" + urllib.parse.quote(q) + extra, token=token)
    assert status == 200, (q, status, body)
    return body["data"]

alice_id, alice = register("alice")
bob_id, bob = register("bob")
carol_id, carol = register("carol")
english = send(alice, bob_id, "Shall we meet at the harbor tomorrow?")
chinese = send(alice, bob_id, "我们明天在港口见面吧")
rich = send(alice, bob_id, {"text": "Harbor map 港口地图", "spans": []}, "richText")
secret = send(alice, bob_id, "the harbor password is 秘密")

# Messages are indexed off the send path, within a fraction of a second: wait (bounded) until all four are found.
deadline = time.monotonic() + 10
while True:
    found = [m["id"] for m in search(bob, "harbor")["messages"]]
    if found == [secret, rich, english] or time.monotonic() > deadline: break
    time.sleep(0.05)
assert found == [secret, rich, english], found
# Revoked: never found again, from the moment the revoke answers.
status, body = call("POST", f"/api/im/messages/{secret}/revoke", token=alice)
assert status == 200, (status, body)
found = [m["id"] for m in search(bob, "harbor")["messages"]]
assert found == [rich, english], found
found = [m["id"] for m in search(bob, "港口见面")["messages"]]
assert found == [chinese], found
assert search(bob, "秘密")["messages"] == [], "a revoked message was found"
assert search(bob, "password")["messages"] == [], "a revoked message was found"
assert search(carol, "harbor")["messages"] == [], "an outsider found messages"

seen, cursor = [], None
for _ in range(5):
    page = search(bob, "港口", "&limit=1" + (f"&cursor={cursor}" if cursor else ""))
    seen += [m["id"] for m in page["messages"]]
    cursor = page["nextCursor"]
    if cursor is None: break
assert seen == [rich, chinese], seen
print("search finds an English word and a Chinese phrase, never a revoked message nor another's conversation")
PY

parley_stop_clean 15
pass "$(tail -n 1 "$log_file")"
