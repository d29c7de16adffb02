"""Issue 20's webhooks end to end, against a real `parley serve` (scripts/e2e/99-webhooks.sh): a receiver playing the
app's backend (stdlib http.server on 127.0.0.1 in a thread, stopped and restarted on the same port) checks every
call's signature with the app secret exactly as a backend verifies Parley's inbound scheme, and the flow checks:
before_send deny (1600 with the backend's code), replace, timeout under `--on-failure allow`; after_send while the
receiver is down and after it is back: every event arrives, in order per conversation, none lost, duplicates only
with the same idempotency key; login/logout; a dead event after PARLEY_WEBHOOK_MAX_ATTEMPTS put back by the admin
route and delivered.

Settings from the environment: WEBHOOK_BASE (the server), WEBHOOK_APP_KEY, WEBHOOK_APP_SECRET, WEBHOOK_PORT (the
receiver's port, the one the app's webhook URL names). Standard library only. Every wait is bounded.
"""
import hashlib
import hmac
import http.server
import json
import os
import secrets
import sys
import threading
import time

BASE = os.environ["WEBHOOK_BASE"]
APP_KEY = os.environ["WEBHOOK_APP_KEY"]
APP_SECRET = os.environ["WEBHOOK_APP_SECRET"]
PORT = int(os.environ["WEBHOOK_PORT"])

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "seeds"))
import client  # noqa: E402

client.BASE, client.APP_KEY, client.APP_SECRET = BASE, APP_KEY, APP_SECRET
TIMEOUT = 10


def check(condition, what):
    if not condition:
        raise SystemExit("FAILED: " + what)


def eventually(condition, what, timeout=60.0, interval=0.05):
    """Polls `condition` until it holds (returns its value) or `timeout` passes (the flow fails naming `what`)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise SystemExit(f"FAILED: {what} (waited {timeout:.0f} s)")
        time.sleep(interval)


# ---------------------------------------------------------------------------------------------------------------
# The receiver


class Receiver:
    def __init__(self, port):
        self.port = port
        self.lock = threading.Lock()
        self.calls = []  # (event, eventId, status, body, verified)
        self.failing = False
        self.server = None
        self.thread = None

    def start(self):
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                verified = receiver.verify(self.command, self.path, self.headers, body)
                document = json.loads(body)
                event = document.get("event")
                status, answer = 200, b'{"ok":true}'
                if event == "before_send":
                    answer = receiver.before_send(document["data"]["message"])
                elif receiver.failing:
                    status = 500
                check(self.headers.get("X-Parley-Idempotency-Key") == document.get("eventId"),
                      "the idempotency key is the body's eventId")
                with receiver.lock:
                    receiver.calls.append((event, document.get("eventId"), status, document, verified))
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        http.server.ThreadingHTTPServer.allow_reuse_address = True
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)

    @staticmethod
    def verify(method, target, headers, body):
        """The inbound scheme (openapi.yaml, "Signed server-to-server requests"), as a backend checks it."""
        if headers.get("X-App-Key") != APP_KEY:
            return False
        timestamp, nonce = headers.get("X-Timestamp", ""), headers.get("X-Nonce", "")
        if abs(int(timestamp or 0) - time.time()) > 300:
            return False
        text = "\n".join([method, target, timestamp, nonce, hashlib.sha256(body).hexdigest()])
        expected = hmac.new(APP_SECRET.encode(), text.encode(), hashlib.sha256).hexdigest()
        return hmac.compare_digest(expected, headers.get("X-Signature", ""))

    @staticmethod
    def before_send(message):
        content = message.get("content")
        if content == "deny me":
            return b'{"action":"deny","code":4001,"message":"no swearing here"}'
        if content == "replace me":
            return b'{"action":"allow","content":"r****e me"}'
        if content == "slow":
            time.sleep(2)  # past the app's 500 ms timeout
        return b'{"action":"allow"}'

    def delivered(self, event):
        with self.lock:
            return [c for c in self.calls if c[0] == event and 200 <= c[2] < 300]

    def all_calls(self):
        with self.lock:
            return list(self.calls)


# ---------------------------------------------------------------------------------------------------------------
# Parley


def http_call(method, path, body=None, token=None, headers=None):
    answer = client.http(method, path, body, token=token, headers=headers)
    return answer.status, answer.body


def signed(method, path, body=None):
    """A call from the app's backend, signed with the app secret."""
    answer = client.signed(method, path, body)
    return answer.status, answer.body


def register(username):
    status, answer = http_call("POST", "/api/auth/register",
                               {"username": username, "password": "webhook password 1", "platform": "ios"},
                               headers={"X-App-Key": APP_KEY})
    check(status in (200, 201) and answer["code"] == 0, f"register {username}: {status} {answer}")
    return {"userId": answer["data"]["user"]["id"], "accessToken": answer["data"]["accessToken"]}


def send(user, to, content):
    return http_call("POST", "/api/im/messages",
                     {"toId": to, "chatType": "single", "msgType": "text", "content": content,
                      "clientMsgId": secrets.token_hex(8)}, token=user["accessToken"])


def deliveries(state):
    status, answer = signed("GET", f"/api/admin/webhooks/deliveries?state={state}&limit=500")
    check(status == 200, f"listing {state} deliveries: {status} {answer}")
    return answer["data"]["deliveries"]


def main():
    receiver = Receiver(PORT)
    receiver.start()
    alice, bob, carol = (register(f"{name}_{secrets.token_hex(3)}") for name in ("alice", "bob", "carol"))
    # Logins reach the receiver once the server has the app's settings (the CLI set them after it started).
    eventually(lambda: len(receiver.delivered("login")) >= 3, "a login event for each registration")
    check({c[3]["data"]["userId"] for c in receiver.delivered("login")} >= {alice["userId"], bob["userId"],
                                                                          carol["userId"]}, "logins name the users")

    # before_send: deny, replace, a timeout under --on-failure allow.
    status, answer = send(alice, bob["userId"], "deny me")
    check(status == 403 and answer["code"] == 1600, f"a denied send answers 403 1600: {status} {answer}")
    check(answer["message"] == "no swearing here" and answer["data"]["backendCode"] == 4001,
          f"the sender gets the backend's message and code: {answer}")
    status, answer = send(alice, bob["userId"], "replace me")
    check(status == 201 and answer["data"]["content"] == "r****e me", f"a replaced send is stored replaced: {answer}")
    started = time.monotonic()
    status, answer = send(alice, bob["userId"], "slow")
    check(status == 201 and answer["data"]["content"] == "slow", f"a timed-out check lets the send through: {answer}")
    check(time.monotonic() - started < 1.9, "the send did not wait for the backend past its timeout")

    # after_send while the receiver is down, and after it is back.
    eventually(lambda: len(receiver.delivered("after_send")) >= 2, "after_send of the sends so far")
    receiver.stop()
    sent = {}
    for round_number in range(10):
        for peer in (bob, carol):
            status, answer = send(alice, peer["userId"], f"round {round_number}")
            check(status == 201, f"a send while the backend is down (before_send fails, policy allow): {answer}")
            sent.setdefault(answer["data"]["conversationId"], []).append(answer["data"]["id"])
    eventually(lambda: any(d["attempts"] >= 1 and d["lastError"] for d in deliveries("pending")),
               "a failed attempt recorded while the receiver is down")
    receiver.start()
    wanted = {message_id for ids in sent.values() for message_id in ids}
    eventually(lambda: wanted <= {c[3]["data"]["message"]["id"] for c in receiver.delivered("after_send")},
               "every after_send once the receiver is back")
    calls = receiver.delivered("after_send")
    check(all(c[4] for c in receiver.all_calls()), "every call is signed with the app secret")
    by_event = {}
    for _, event_id, _, document, _ in calls:
        previous = by_event.setdefault(event_id, document["data"])
        check(previous == document["data"], f"a duplicate of {event_id} carries the same event")
    first_arrival = {}
    seen = set()
    for _, event_id, _, document, _ in calls:
        if event_id in seen:
            continue
        seen.add(event_id)
        message = document["data"]["message"]
        first_arrival.setdefault(message["conversationId"], []).append(message["id"])
    for conversation, ids in sent.items():
        arrived = [i for i in first_arrival.get(conversation, []) if i in ids]
        check(arrived == ids, f"after_send in order in {conversation}: sent {ids}, arrived {arrived}")
    duplicates = len(calls) - len(seen)

    # A dead event, put back by the admin route.
    receiver.failing = True
    status, answer = send(alice, bob["userId"], "doomed")
    check(status == 201, f"send: {answer}")
    doomed = answer["data"]["id"]
    dead = eventually(lambda: [d for d in deliveries("dead") if d["event"] == "after_send"],
                      "the event dead after PARLEY_WEBHOOK_MAX_ATTEMPTS")
    check(dead[0]["attempts"] == 3 and dead[0]["lastStatus"] == 500, f"dead after 3 attempts of HTTP 500: {dead}")
    receiver.failing = False
    status, answer = signed("POST", f"/api/admin/webhooks/deliveries/{dead[0]['id']}/retry", {})
    check(status == 200 and answer["data"]["state"] == "pending", f"retry puts it back: {status} {answer}")
    eventually(lambda: any(c[3]["data"]["message"]["id"] == doomed for c in receiver.delivered("after_send")),
               "the retried event delivered")
    status, answer = signed("POST", f"/api/admin/webhooks/deliveries/{dead[0]['id']}/retry", {})
    check(status == 409 and answer["code"] == 1603, f"only dead events are retried: {status} {answer}")

    # logout carries its reason.
    status, answer = http_call("POST", "/api/auth/logout", {}, token=carol["accessToken"])
    check(status == 200, f"logout: {status} {answer}")
    logout = eventually(lambda: [c for c in receiver.delivered("logout") if c[3]["data"]["userId"] == carol["userId"]],
                        "the logout event")
    check(logout[0][3]["data"]["reason"] == "logout", f"logout's reason: {logout[0][3]['data']}")

    status, answer = signed("GET", "/api/admin/webhooks")
    check(status == 200 and answer["data"]["url"].endswith(f":{PORT}/hook"), f"the settings: {answer}")
    receiver.stop()
    print(f"webhooks: before_send deny/replace/timeout, {len(wanted)} after_send across a receiver outage in order "
          f"({duplicates} duplicates, same keys), a dead event retried, login and logout; every call signed")


if __name__ == "__main__":
    main()
