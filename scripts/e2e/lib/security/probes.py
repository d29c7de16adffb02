"""The live probes of issue 18's security review, replayed against the real binary (scripts/e2e/97-security.sh).

Each probe is what the review sent and saw; it must now see the safe answer. The wire plumbing is the seed
flows' (scripts/e2e/lib/seeds/client.py), reading the same environment: SEEDS_BASE, SEEDS_APP_KEY. Run one
probe with `probes.py NAME`, all with no argument; each prints one line, a failure exits non-zero with the reason.
"""
import asyncio
import json
import os
import socket
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "seeds"))
import client  # noqa: E402
from client import check, http  # noqa: E402

CSP = "default-src 'none'; sandbox"


def session(name, device=None):
    extra = {"deviceId": device} if device else {}
    answer = client.register(name, **extra)
    check(answer.status == 200, f"register {name}: {answer}")
    data = answer.body["data"]
    return {"id": data["user"]["id"], "token": data["accessToken"], "im": data["imToken"]}


def upload(user, content, name, content_type):
    answer = http("PUT", "/api/files", token=user["token"], raw_body=content, content_type=content_type,
                  headers={"X-File-Name": name})
    check(answer.status == 201, f"upload {name}: {answer}")
    return answer.body["data"]


def fetch(url, method="GET"):
    """status, headers (lower-case names), body of a download, without following redirects."""
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=client.TIMEOUT) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def send(sender, to, msg_type, content):
    return http("POST", "/api/im/messages", {"toId": to, "chatType": "single", "msgType": msg_type,
                                             "content": content}, token=sender["token"])


def readable(user, key):
    answer = http("POST", "/api/files/urls", {"objectKeys": [key]}, token=user["token"])
    check(answer.status == 200, f"urls: {answer}")
    return [u["objectKey"] for u in answer.body["data"]["urls"]] == [key]


# 1. An HTML upload downloaded as text/html, inline, without CSP; an SVG with onload was image/svg+xml.
def downloads_never_run_in_a_browser():
    eve = session("eve_downloads")
    page = upload(eve, b"<html><script>alert(document.cookie)</script></html>", "page.html", "text/html")
    svg = upload(eve, b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>', "logo.svg", "image/svg+xml")
    for stored, what in ((page, "html"), (svg, "svg")):
        check(stored["mimeType"] == "application/octet-stream", f"{what} stored as {stored['mimeType']}")
        status, headers, _ = fetch(stored["url"])
        check(status == 200, f"{what} download: {status}")
        check(headers.get("content-type") == "application/octet-stream", f"{what} served as {headers}")
        check(headers.get("content-disposition", "").startswith("attachment"), f"{what} disposition: {headers}")
        check(headers.get("content-security-policy") == CSP, f"{what} CSP: {headers}")
        check(headers.get("cross-origin-resource-policy") == "same-site", f"{what} CORP: {headers}")
        check(headers.get("x-content-type-options") == "nosniff", f"{what} nosniff: {headers}")
    # An image may show inline, and only as its signed URL says: flipping d= breaks the signature.
    image = upload(eve, client.png(), "cat.png", "image/png")
    status, headers, _ = fetch(image["url"])
    check(status == 200 and headers.get("content-disposition", "").startswith("inline"), f"png: {headers}")
    attachment = http("POST", "/api/files/urls", {"objectKeys": [image["objectKey"]], "disposition": "attachment"},
                      token=eve["token"]).body["data"]["urls"][0]["url"]
    check("d=a" in attachment, f"attachment URL: {attachment}")
    status, _, body = fetch(attachment.replace("d=a", "d=i"))
    check(status == 403 and b"1305" in body, f"a flipped disposition answered {status} {body[:200]!r}")
    print("downloads: html and svg stored and served as octets, attachment, CSP/CORP/nosniff; d= is signed")


# 2. A revoked file became readable to every user of the app once someone set its key as their avatar.
def avatars_are_files_the_setter_may_read():
    alice, bob, carol = session("alice_avatar"), session("bob_avatar"), session("carol_avatar")
    key = upload(alice, client.png(), "private.png", "image/png")["objectKey"]
    stolen = http("PATCH", "/api/users/me", {"avatar": key}, token=carol["token"])
    client.refused(stolen, "an avatar the setter may not read", 1302)
    sent = send(alice, bob["id"], "image", {"objectKey": key, "width": 16, "height": 8})
    check(sent.status in (200, 201), f"send: {sent}")
    set_avatar = http("PATCH", "/api/users/me", {"avatar": key}, token=bob["token"])
    check(set_avatar.status == 200, f"bob's avatar: {set_avatar}")
    record = set_avatar.body["data"]["avatar"]
    check(record and record != key, f"the profile names the original key {record}")
    revoked = http("POST", f"/api/im/messages/{sent.body['data']['id']}/revoke", token=alice["token"])
    check(revoked.status == 200, f"revoke: {revoked}")
    check(not readable(carol, key), "the revoked original is readable by a third user")
    check(not readable(bob, key), "the revoked original is still readable by its receiver")
    check(readable(carol, record), "the avatar record is not readable by the app")
    notes = upload(carol, b"plain notes\n", "notes.txt", "text/plain")["objectKey"]
    client.refused(http("PATCH", "/api/users/me", {"avatar": notes}, token=carol["token"]), "a text avatar", 1310)
    print("avatars: unreadable keys 1302, non-images 1310, a record of its own; a revoke still takes the original")


# 3. POST /api/privacy/consent answered a fresh access token for any valid one.
def no_token_renews_itself():
    dan = session("dan_consent")
    answer = http("POST", "/api/privacy/consent", {"version": 0}, token=dan["token"])
    check(answer.status == 200, f"consent: {answer}")
    check(answer.body["data"]["accessToken"] is None, f"consent with nothing pending issued a token: {answer}")
    print("consent: nothing pending, no token")


# 4. Ten wrong passwords made the right one answer 429 (1036) for 15 minutes.
def lockout_cannot_be_used_against_the_owner():
    owner = session("frank_lockout", device="frank-phone")
    check(owner["token"], "owner")
    # Past the allowance each failure doubles the delay (1 s, 2 s, 4 s, ...): however slowly this machine sends
    # them, a guess soon lands inside one and is told to wait.
    attempts, delayed = 0, None
    while delayed is None and attempts < 30:
        attempts += 1
        answer = http("POST", "/api/auth/login", {"username": "frank_lockout", "password": "wrong password 1",
                                                  "platform": "ios", "deviceId": "attacker-device"},
                      headers={"X-App-Key": client.APP_KEY})
        check(answer.status in (401, 429), f"wrong password: {answer}")
        if answer.status == 429:
            delayed = answer
    check(delayed is not None and delayed.code == 1036, f"{attempts} wrong passwords were never slowed down")
    check(attempts > 10, f"the guesser was slowed down after {attempts - 1} failures, before the allowance")
    # The owner's own device still signs in at once, with the right password.
    mine = client.password_login("frank_lockout", deviceId="frank-phone")
    check(mine.status == 200, f"the owner's device was locked out: {mine}")
    print(f"lockout: the guesser delayed at attempt {attempts} (1036), the owner's device signs in at once")


# 5. A third user got 403 for a conversation between two others and 404 for a pair that never talked.
def conversations_you_are_not_in_do_not_exist():
    gina, hal, ian = session("gina_conv"), session("hal_conv"), session("ian_conv")
    check(send(gina, hal["id"], "text", "hello").status in (200, 201), "send")
    low, high = sorted([gina["id"], hal["id"]])
    real = f"si:{low}:{high}"
    never = "si:{}:{}".format(*sorted([hal["id"], "u_nobody_here"]))
    for path in (f"/api/im/conversations/{real}", f"/api/im/conversations/{real}/messages",
                 f"/api/im/conversations/{never}", f"/api/im/conversations/{never}/messages"):
        answer = http("GET", path, token=ian["token"])
        check(answer.status == 404 and answer.code == 1101, f"{path}: {answer}")
    print("conversations: another pair's and a nonexistent one both answer 404 1101")


# 10. Text with NUL was a 500 (and libpq cut it short).
def nul_characters_are_refused_up_front():
    jo, kim = session("jo_nul"), session("kim_nul")
    answer = send(jo, kim["id"], "text", "before\u0000after")
    client.refused(answer, "a NUL in text", 1002)
    check(answer.status == 400, f"NUL: {answer}")
    print("content: NUL refused with 400 1002")


# 9. Quotas: the server runs with a 1 MiB user quota and a burst of 10 sends refilling once a minute (97-security.sh).
def quotas_hold():
    lee = session("lee_quota")
    first = http("PUT", "/api/files", token=lee["token"], raw_body=os.urandom(700_000),
                 content_type="application/octet-stream", headers={"X-File-Name": "a.bin"})
    check(first.status == 201, f"first upload: {first}")
    over = http("PUT", "/api/files", token=lee["token"], raw_body=os.urandom(700_000),
                content_type="application/octet-stream", headers={"X-File-Name": "b.bin"})
    client.refused(over, "an upload past the user's storage quota", 1315)
    check(over.status == 413, f"storage quota: {over}")
    mo = session("mo_quota")
    codes = [send(lee, mo["id"], "text", f"message {i}").code for i in range(20)]
    check(1118 in codes and codes[0] == 0, f"twenty sends at once were never slowed down: {codes}")
    check(codes[:10] == [0] * 10 and codes[10:] == [1118] * 10, f"twenty sends against a burst of ten: {codes}")
    print("quotas: user storage 413 1315; sends past the burst 429 1118")


# 4 and 9. Registration says nothing about existing usernames beyond sign-up's 1040, and is limited per address.
def registrations_are_limited_per_address():
    answers = [client.register(f"flood_{i}") for i in range(40)]
    limited = [a for a in answers if a.status == 429]
    check(limited and limited[0].code == 1044, f"forty registrations from one address were never limited")
    print(f"registrations: limited per address ({len(limited)} of 40 answered 429 1044)")


def raw_exchange(head, body_chunks=(), pause=0.0, timeout=30):
    """Sends `head`, then each chunk `pause` seconds apart (stopping when the server closes); returns what the
    server answered and whether it closed the connection."""
    host, port = client.BASE.replace("http://", "").split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as conn:
        conn.sendall(head.encode())
        for chunk in body_chunks:
            time.sleep(pause)
            try:
                conn.sendall(chunk)
            except OSError:
                break
        received = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                part = conn.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not part:
                return received, True
            received += part
        return received, False


# 6. Slow and endless bodies: a 404 is answered from the head, and a trickling body gets 408 (the server runs with
# a one-second grace period, see 97-security.sh).
def slow_and_endless_bodies_are_cut_off():
    answer, closed = raw_exchange("POST /no/such/route HTTP/1.1\r\nHost: probe\r\nContent-Length: 100000000\r\n\r\n")
    check(answer.startswith(b"HTTP/1.1 404") and closed, f"an endless body to no route: {answer[:200]!r}")
    head = ("POST /api/auth/register HTTP/1.1\r\nHost: probe\r\nContent-Type: application/json\r\n"
            f"X-App-Key: {client.APP_KEY}\r\nContent-Length: 5000\r\n\r\n")
    answer, closed = raw_exchange(head, [b"{"] + [b" "] * 60, pause=0.1)
    check(answer.startswith(b"HTTP/1.1 408") and b"1011" in answer and closed, f"a trickling body: {answer[:300]!r}")
    print("bodies: 404 answered from the head and closed; a trickling body 408 1011")


# 7. WebSocket amplification: messages bounded by the largest legitimate frame; a session holds a bounded number of
# sockets, live or not (past PARLEY_WS_MAX_SOCKETS_PER_SESSION, 16, the newest closes the oldest with 4502; live
# sockets past the probe limit, 4, answer its ping and stay).
def websocket_bounds_hold():
    user = session("nia_ws")

    async def run():
        big = await client.Device("big", user["im"]).connect()
        await big.ws.send(json.dumps({"type": "ping", "reqId": "x", "data": {"pad": "x" * 300_000}}))
        code = await big.closed("a 300 KB message")
        check(code == 1009, f"a 300 KB message: close {code}")
        devices = [await client.Device(f"socket {i}", user["im"]).connect() for i in range(17)]
        code = await devices[0].closed("the oldest of seventeen sockets")
        check(code == 4502, f"the oldest of seventeen sockets: close {code}")
        for device in devices[1:]:
            await device.close()

    asyncio.run(run())
    print("websocket: a 300 KB message closes with 1009; a seventeenth socket of one session closes the oldest with 4502")


PROBES = [
    downloads_never_run_in_a_browser,
    avatars_are_files_the_setter_may_read,
    no_token_renews_itself,
    lockout_cannot_be_used_against_the_owner,
    conversations_you_are_not_in_do_not_exist,
    nul_characters_are_refused_up_front,
    slow_and_endless_bodies_are_cut_off,
    websocket_bounds_hold,
    quotas_hold,
    registrations_are_limited_per_address,
]

if __name__ == "__main__":
    wanted = sys.argv[1:]
    for probe in PROBES:
        if not wanted or probe.__name__ in wanted:
            probe()
