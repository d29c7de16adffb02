"""Seeds an app for the schemathesis pass (scripts/e2e/85-schemathesis.sh) through the public API and prints what
the run needs as JSON: the fuzzing user's tokens, ids of a 1:1 and a group conversation, messages, an uploaded file
and its signed URL, a release and a push token, so that operations answer more than 401 and 404; and what the hooks'
documented rules need (the messages' types, the app's privacy-policy version).

    python3 schemathesis_seed.py BASE_URL APP_KEY APP_SECRET
"""

import hashlib
import hmac
import json
import secrets
import sys
import time
import urllib.error
import urllib.parse
import urllib.request


PASSWORD = "correct horse battery"


class Client:
    def __init__(self, base, app_key, app_secret):
        self.base = base
        self.app_key = app_key
        self.app_secret = app_secret

    def call(self, method, path, body=None, token=None, headers=None, raw=None, signed=False):
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")
        all_headers = dict(headers or {})
        if body is not None:
            all_headers["Content-Type"] = "application/json"
        if token:
            all_headers["Authorization"] = "Bearer " + token
        if signed:
            all_headers.update(sign_headers(self.app_key, self.app_secret, method, path, data))
        request = urllib.request.Request(self.base + path, data=data if method != "GET" else None, method=method,
                                         headers=all_headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, text = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read()
        envelope = json.loads(text)
        if status >= 300 or envelope.get("code") != 0:
            raise SystemExit(f"seed: {method} {path} answered {status}: {text[:500]!r}")
        return envelope["data"]

    def register(self, username):
        return self.call("POST", "/api/auth/register",
                         {"username": username, "password": PASSWORD, "platform": "schemathesis"},
                         headers={"X-App-Key": self.app_key})


def sign_headers(app_key, app_secret, method, path_with_query, body):
    """The four headers of a signed server-to-server request (openapi.yaml, "Signed server-to-server requests")."""
    timestamp = str(int(time.time()))
    nonce = "st-" + secrets.token_hex(12)
    digest = hashlib.sha256(body).hexdigest()
    message = "\n".join([method, path_with_query, timestamp, nonce, digest]).encode()
    signature = hmac.new(app_secret.encode(), message, hashlib.sha256).hexdigest()
    return {"X-App-Key": app_key, "X-Timestamp": timestamp, "X-Nonce": nonce, "X-Signature": signature}


def main():
    base, app_key, app_secret = sys.argv[1:4]
    client = Client(base, app_key, app_secret)
    alice = client.register("alice")
    bob = client.register("bob")
    carol = client.register("carol")
    # The user whose sessions the hooks (schemathesis_hooks.py) open and end, and the fuzzer logs in as.
    client.register("throwaway")
    token = alice["accessToken"]
    alice_id, bob_id, carol_id = (user["user"]["id"] for user in (alice, bob, carol))

    # A 1:1 conversation with a text and a richText message (both editable and revocable by alice).
    text = client.call("POST", "/api/im/messages", {"toId": bob_id, "chatType": "single", "msgType": "text",
                                                   "content": "hello bob", "clientMsgId": "seed-1"}, token=token)
    rich = client.call("POST", "/api/im/messages", {"toId": bob_id, "chatType": "single", "msgType": "richText",
                                                   "content": {"text": "hello again"}, "clientMsgId": "seed-2"},
                       token=token)
    client.call("POST", "/api/im/messages", {"toId": alice_id, "chatType": "single", "msgType": "text",
                                            "content": "hi alice", "clientMsgId": "seed-3"}, token=bob["accessToken"])
    # A group alice owns with bob and carol, and a message in it.
    group = client.call("POST", "/api/im/groups", {"name": "seeded group", "memberIds": [bob_id, carol_id]},
                        token=token)
    group_message = client.call("POST", "/api/im/messages",
                                {"toId": group["groupId"], "chatType": "group", "msgType": "text",
                                 "content": "hello group", "clientMsgId": "seed-4"}, token=token)
    # Chat rooms alice created (room messages are sent over the WebSocket only, so their histories stay empty).
    room_ids = [client.call("POST", "/api/im/rooms", {"name": f"seeded room {n}"}, token=token)["roomId"]
                for n in (1, 2)]
    # A file (a tiny PNG) and a fresh signed URL for it.
    png = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")
    uploaded = client.call("PUT", "/api/files", raw=png, token=token,
                           headers={"Content-Type": "image/png", "X-File-Name": "pixel.png"})
    # A release of the app, published with a signed call.
    release = client.call("POST", "/api/admin/releases",
                          {"platform": "ios", "versionCode": 100, "versionName": "1.0.0",
                           "appStoreUrl": "https://apps.apple.com/app/id1"}, signed=True)
    # The user the admin operations that end sessions or accounts act on (the hooks keep them off the seeded ones).
    client.call("POST", "/api/admin/users", {"users": [{"userId": "st-admin-target"}]}, signed=True)
    push_token = "ab" * 32
    client.call("POST", "/api/push/tokens", {"token": push_token, "vendor": "apns"}, token=token)

    privacy = client.call("GET", "/api/privacy", token=token)
    # Calls for the operations on one call (accept, reject, cancel, hangup, get): one alice placed to bob, ringing,
    # and one carol placed to alice (alice, in her own call, answers busy: it ended at once). A user is in one call
    # at a time, so alice cannot place two.
    call_ids = [client.call("POST", "/api/calls", {"participantIds": [bob_id], "mediaType": "audio",
                                                    "timeoutSeconds": 120}, token=token)["callId"],
                client.call("POST", "/api/calls", {"participantIds": [alice_id], "mediaType": "video",
                                                    "timeoutSeconds": 120}, token=carol["accessToken"])["callId"]]

    url = urllib.parse.urlsplit(uploaded["url"])
    query = dict(urllib.parse.parse_qsl(url.query))
    print(json.dumps({
        "accessToken": token,
        "imToken": alice["imToken"],
        "sessionId": alice["sessionId"],
        "userId": alice_id,
        "userIds": [alice_id, bob_id, carol_id],
        "recipients": [bob_id, carol_id, group["groupId"]],
        "conversationIds": [text["conversationId"], group_message["conversationId"]],
        "messageIds": [text["id"], rich["id"], group_message["id"]],
        "messageTypes": {text["id"]: "text", rich["id"]: "richText", group_message["id"]: "text"},
        "privacyVersion": privacy["version"],
        "groupId": group["groupId"],
        "objectKey": uploaded["objectKey"],
        "fileURL": uploaded["url"],
        "fileExp": query["exp"],
        "fileSig": query["sig"],
        "releaseId": release["id"],
        "pushToken": push_token,
        "callIds": call_ids,
        "roomIds": room_ids,
        "adminTarget": "st-admin-target",
        "throwawayUsername": "throwaway",
        "password": PASSWORD,
    }))


if __name__ == "__main__":
    main()
