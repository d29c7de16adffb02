"""Wire plumbing shared by the seed flows (scripts/e2e/95-seeds.sh): REST with the envelope decoded strictly,
signed server-to-server calls, one WebSocket per device, the mock APNs' record, bounded waits.

The flows read their settings from the environment the script sets:
  SEEDS_BASE          http://127.0.0.1:PORT of the server under test
  SEEDS_OTHER_BASE    a second instance on the same database, for the flows that use two (else SEEDS_BASE)
  SEEDS_APP_KEY       the seed's own app (one app per seed)
  SEEDS_APP_SECRET    its secret (for the signed calls of seeds whose backend signs users in)
  SEEDS_APNS_RECORD   the mock APNs' record file (JSON lines), for the seeds that check pushes
  SEEDS_DATABASE_URL  the database, read only to wait until the push outbox is empty
Every wait is bounded; a failed check raises SystemExit with the reason.
"""
import asyncio
import hashlib
import hmac
import json
import os
import secrets
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

import wire

BASE = os.environ.get("SEEDS_BASE", "")
OTHER_BASE = os.environ.get("SEEDS_OTHER_BASE", "") or BASE
APP_KEY = os.environ.get("SEEDS_APP_KEY", "")
APP_SECRET = os.environ.get("SEEDS_APP_SECRET", "")
APNS_RECORD = os.environ.get("SEEDS_APNS_RECORD", "")
DATABASE_URL = os.environ.get("SEEDS_DATABASE_URL", "")
TIMEOUT = 10


def check(condition, what):
    if not condition:
        raise SystemExit("FAILED: " + what)


def decoded(spec, value, what):
    """`value` decoded with `spec`, or the flow fails naming the field the seed's client would choke on."""
    try:
        return wire.decode(spec, value, what)
    except wire.DecodeError as error:
        raise SystemExit(f"FAILED: the seed's decoder rejects {what}: {error}")


class Answer:
    def __init__(self, status, body, raw):
        self.status, self.body, self.raw = status, body, raw

    @property
    def code(self):
        return self.body.get("code") if isinstance(self.body, dict) else None

    def __repr__(self):
        return f"HTTP {self.status} {self.raw[:400]!r}"


def http(method, path, body=None, token=None, headers=None, raw_body=None, content_type="application/json",
         base=None):
    """One request (to `base`, default BASE); the answer's JSON (or None) with its status. `body` is sent as JSON
    unless `raw_body`."""
    data = raw_body if raw_body is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request((base or BASE) + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", content_type)
    if token:
        request.add_header("Authorization", "Bearer " + token)
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:
        parsed = None
    return Answer(status, parsed, raw)


def ok(answer, data_spec, what, status=(200, 201)):
    """The `data` of a successful `ApiResponse<T>`, decoded with T's spec."""
    check(answer.status in status, f"{what}: {answer}")
    envelope = decoded(wire.api_response(data_spec), answer.body, what)
    check(envelope["code"] == 0, f"{what}: code {envelope['code']} ({envelope['message']})")
    check(envelope["data"] is not None, f"{what}: ApiResponse.data is null")
    return envelope["data"]


def done(answer, what):
    """A successful `ApiResponse<T>` whose `data` the client ignores (it may be null)."""
    check(answer.status in (200, 201, 204), f"{what}: {answer}")
    envelope = decoded(wire.api_response(wire.ANY), answer.body, what)
    check(envelope["code"] == 0, f"{what}: code {envelope['code']} ({envelope['message']})")


def refused(answer, what, code=None):
    """An error envelope (decoded as `ApiResponse<T>` with a null `data`), optionally with `code`."""
    envelope = decoded(wire.api_response(wire.ANY), answer.body, what)
    check(answer.status >= 400 and envelope["code"] != 0, f"{what}: expected a refusal, got {answer}")
    check(code is None or envelope["code"] == code, f"{what}: expected code {code}, got {answer}")
    return envelope


def signed(method, path, body=None, headers=None):
    """A call from the app's own backend, signed with the app secret ("Signed server-to-server requests"); no body
    at all when `body` is None (the signature then covers the empty body)."""
    raw = json.dumps(body, separators=(",", ":")).encode() if body is not None else b""
    timestamp, nonce = str(int(time.time())), "n-" + secrets.token_hex(8)
    text = "\n".join([method, path, timestamp, nonce, hashlib.sha256(raw).hexdigest()])
    signature = hmac.new(APP_SECRET.encode(), text.encode(), hashlib.sha256).hexdigest()
    all_headers = {"X-App-Key": APP_KEY, "X-Timestamp": timestamp, "X-Nonce": nonce, "X-Signature": signature}
    all_headers.update(headers or {})
    return http(method, path, raw_body=raw if body is not None else None, headers=all_headers)


def register(username, platform="ios", nickname=None, **extra):
    body = {"username": username, "password": "seed password 1", "platform": platform, **extra}
    if nickname:
        body["nickname"] = nickname
    return http("POST", "/api/auth/register", body, headers={"X-App-Key": APP_KEY})


def password_login(username, platform="ios", **extra):
    body = {"username": username, "password": "seed password 1", "platform": platform, **extra}
    return http("POST", "/api/auth/login", body, headers={"X-App-Key": APP_KEY})


def multipart(fields):
    """A multipart/form-data body: fields are (name, filename, content type, bytes)."""
    boundary = "seed-" + secrets.token_hex(12)
    parts = []
    for name, filename, ctype, content in fields:
        parts.append(f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{filename}\"\r\n"
                     f"Content-Type: {ctype}\r\n\r\n".encode() + content + b"\r\n")
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def download(url):
    with urllib.request.urlopen(url, timeout=TIMEOUT) as response:
        return response.read()


def query(path, **params):
    return path + "?" + urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})


# PNG of 16 x 8 pixels (the signature and IHDR are all the type sniffer and the client need).
def png(width=16, height=8):
    import struct
    import zlib
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + b"\x00\x00\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


class Device:
    """One WebSocket (`Authorization: Bearer <token>`) to `base` (default BASE); frames not awaited yet are kept for
    later, and `received` keeps every frame read, in order (to count what arrived)."""

    def __init__(self, name, token, headers=None, base=None):
        self.name, self.token, self.headers, self.base = name, token, headers or {}, base or BASE
        self.buffer, self.counter, self.ws, self.hello = [], 0, None, None
        self.received = []

    async def connect(self):
        url = self.base.replace("http://", "ws://") + "/ws"
        self.ws = await connect(url, additional_headers={"Authorization": "Bearer " + self.token, **self.headers},
                                open_timeout=TIMEOUT, max_size=2 ** 22)
        self.hello = json.loads(await asyncio.wait_for(self.ws.recv(), TIMEOUT))
        check(self.hello.get("type") == "hello", f"{self.name}: first frame {self.hello}")
        return self

    async def next(self, predicate, what, timeout=TIMEOUT):
        for index, frame in enumerate(self.buffer):
            if predicate(frame):
                return self.buffer.pop(index)

        async def read():
            while True:
                frame = json.loads(await self.ws.recv())
                self.received.append(frame)
                if predicate(frame):
                    return frame
                self.buffer.append(frame)
        try:
            return await asyncio.wait_for(read(), timeout)
        except asyncio.TimeoutError:
            raise SystemExit(f"FAILED: {self.name} waited {timeout}s for {what}; buffered: {self.buffer[-5:]}")

    async def event(self, kind, what=None, **fields):
        def matches(frame):
            data = frame.get("data") if isinstance(frame.get("data"), dict) else {}
            return frame.get("type") == kind and all(data.get(k) == v for k, v in fields.items())
        return (await self.next(matches, what or f"{kind} {fields}"))["data"]

    async def call(self, kind, data=None):
        """A request frame and its one answer (`ack` or `error`), as sent."""
        self.counter += 1
        req_id = f"{self.name}-{self.counter}"
        frame = {"type": kind, "reqId": req_id}
        if data is not None:
            frame["data"] = data
        await self.ws.send(json.dumps(frame))
        return await self.next(lambda f: f.get("reqId") == req_id, f"the answer to {kind}")

    async def request(self, kind, data=None):
        answer = await self.call(kind, data)
        check(answer.get("type") == "ack", f"{self.name} {kind} {data}: {answer}")
        return answer["data"]

    async def closed(self, what):
        """The server's close code, waiting (bounded) for the close."""
        try:
            await asyncio.wait_for(self.ws.wait_closed(), TIMEOUT)
        except asyncio.TimeoutError:
            raise SystemExit(f"FAILED: {self.name}'s socket stayed open ({what})")
        return self.ws.protocol.close_code

    async def still_open(self):
        """The socket answers a `ping` frame: it was not closed."""
        answer = await self.call("ping")
        return answer.get("type") == "ack"

    async def settle(self, seconds):
        """Reads (into the buffer) whatever arrives within `seconds`, or until the socket closes."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                frame = json.loads(await asyncio.wait_for(self.ws.recv(), left))
            except (asyncio.TimeoutError, ConnectionClosed):
                return
            self.received.append(frame)
            self.buffer.append(frame)

    def frames(self, kind):
        return [frame for frame in self.buffer if frame.get("type") == kind]

    async def close(self):
        await self.ws.close()


async def eventually(probe, what, timeout=TIMEOUT, interval=0.05):
    """Polls `probe()` until it returns something truthy (bounded); returns it."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise SystemExit(f"FAILED: waited {timeout}s for {what}")
        await asyncio.sleep(interval)


def apns_requests(token=None):
    """The mock APNs' record: every push request so far, in arrival order."""
    try:
        with open(APNS_RECORD) as f:
            entries = [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []
    return [entry for entry in entries if token is None or entry.get("token") == token]


def sql_value(statement):
    out = subprocess.run(["psql", "-X", "-tA", "-v", "ON_ERROR_STOP=1", "-c", statement, DATABASE_URL],
                         capture_output=True, text=True, timeout=TIMEOUT)
    check(out.returncode == 0, f"psql {statement}: {out.stderr}")
    return out.stdout.strip()


async def push_outbox_empty():
    """Waits until every queued push was delivered, given up or dropped."""
    await eventually(lambda: sql_value("SELECT count(*) FROM push_jobs") == "0", "an empty push outbox")


def apns_token():
    return secrets.token_hex(32)


class Flow:
    """A seed's flow in named steps. Normally the first failed step ends the flow (later steps build on earlier
    ones). With SEEDS_KEEP_GOING=1 every step runs and each failure is listed (a map of what works today)."""

    def __init__(self, seed):
        self.seed, self.failures, self.passed = seed, [], []
        self.keep_going = os.environ.get("SEEDS_KEEP_GOING") == "1"

    def step(self, name):
        flow = self

        class Step:
            def __enter__(self):
                return self

            def __exit__(self, kind, error, trace):
                if kind is None:
                    flow.passed.append(name)
                    return False
                reason = str(error) if isinstance(error, SystemExit) else f"{kind.__name__}: {error}"
                if not flow.keep_going:
                    raise SystemExit(f"FAILED [{flow.seed} / {name}]: {reason.removeprefix('FAILED: ')}")
                flow.failures.append((name, reason.removeprefix("FAILED: ")))
                print(f"  step failed: {name}: {reason}", flush=True)
                return isinstance(error, Exception) or isinstance(error, SystemExit)
        return Step()

    def finish(self, summary):
        if self.failures:
            for name, reason in self.failures:
                print(f"FAILED step [{self.seed} / {name}]: {reason[:600]}")
            print(f"{self.seed}: {len(self.passed)} steps passed, {len(self.failures)} failed")
            raise SystemExit(1)
        print(summary)
