"""The clients' network layer: a keep-alive HTTP/1.1 client on asyncio streams and a WebSocket device.

Parley answers every request with `Content-Length`, so the HTTP client needs no chunked decoding. Every call is
bounded by a timeout; a failure is reported as status 0 (no answer), never as an exception the caller forgets.
"""
import asyncio
import json
import time

from websockets.asyncio.client import connect as ws_connect

TIMEOUT = 10.0


class Failed(Exception):
    """A check failed or the run cannot go on; the message says which."""


class Answer:
    """One HTTP answer: status (0 when none came), the envelope's code, the body, the time it took."""

    __slots__ = ("status", "code", "body", "data", "seconds", "error")

    def __init__(self, status, body=b"", seconds=0.0, error=None):
        self.status, self.body, self.seconds, self.error = status, body, seconds, error
        self.code, self.data = None, None
        if body[:1] == b"{":
            try:
                envelope = json.loads(body)
                self.code, self.data = envelope.get("code"), envelope.get("data")
            except ValueError:
                pass

    def __repr__(self):
        return f"HTTP {self.status} code {self.code} ({self.error or self.body[:200]!r})"


class HTTPClient:
    """One keep-alive connection to host:port, reopened when the server closed it. Not for concurrent use."""

    def __init__(self, base):
        host_port = base.split("://", 1)[1].rstrip("/")
        self.host, port = host_port.rsplit(":", 1)
        self.port = int(port)
        self.reader = self.writer = None

    async def close(self):
        if self.writer is not None:
            self.writer.close()
            try:
                await asyncio.wait_for(self.writer.wait_closed(), 1)
            except (OSError, asyncio.TimeoutError):
                pass
        self.reader = self.writer = None

    async def request(self, method, path, body=None, token=None, headers=None, timeout=TIMEOUT):
        """Sends one request; returns an Answer (status 0 and `error` when the connection failed or timed out)."""
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            headers = {"Content-Type": "application/json", **(headers or {})}
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}"]
        if token:
            lines.append("Authorization: Bearer " + token)
        for name, value in (headers or {}).items():
            lines.append(f"{name}: {value}")
        lines.append(f"Content-Length: {len(body or b'')}")
        raw = ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b"")
        started = time.monotonic()
        try:
            return await asyncio.wait_for(self._exchange(raw, method, started), timeout)
        except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, ValueError) as error:
            await self.close()
            return Answer(0, seconds=time.monotonic() - started, error=type(error).__name__ + " " + str(error))

    async def _exchange(self, raw, method, started):
        for attempt in (0, 1):
            fresh = self.writer is None
            if fresh:
                self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
            try:
                self.writer.write(raw)
                await self.writer.drain()
                head = await self.reader.readuntil(b"\r\n\r\n")
                break
            except (ConnectionResetError, BrokenPipeError, asyncio.IncompleteReadError) as error:
                partial = getattr(error, "partial", b"")
                if fresh or partial or attempt == 1:
                    raise
                # The server had closed this idle keep-alive connection before the request: send it on a new one.
                await self.close()
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        status = int(status_line.split(" ", 2)[1])
        length, close = 0, False
        for line in header_lines:
            name, _, value = line.partition(":")
            name = name.strip().lower()
            if name == "content-length":
                length = int(value)
            elif name == "connection" and value.strip().lower() == "close":
                close = True
        body = await self.reader.readexactly(length) if length and method != "HEAD" else b""
        if close:
            await self.close()
        return Answer(status, body, time.monotonic() - started)


async def rest(base, method, path, body=None, token=None, headers=None, timeout=TIMEOUT):
    """One request on a connection of its own."""
    client = HTTPClient(base)
    try:
        return await client.request(method, path, body, token, headers, timeout)
    finally:
        await client.close()


async def register(base, app_key, username, platform="ios"):
    """A new user with a session: {user: {id}, accessToken, imToken, ...}."""
    for attempt in range(5):
        answer = await rest(base, "POST", "/api/auth/register",
                            {"username": username, "password": "chaos password 1", "platform": platform},
                            headers={"X-App-Key": app_key})
        if answer.status == 200:
            return answer.data
        await asyncio.sleep(0.2 * (attempt + 1))
    raise Failed(f"register {username}: {answer}")


def ws_url(base):
    return base.replace("http://", "ws://") + "/ws"


async def open_ws(base, im_token, timeout=TIMEOUT):
    """A WebSocket with the IM token; returns (socket, hello data). The library answers the server's pings."""
    ws = await ws_connect(ws_url(base), additional_headers={"Authorization": "Bearer " + im_token},
                          open_timeout=timeout, close_timeout=2, max_size=2 ** 23, max_queue=1024,
                          ping_interval=None)
    hello = json.loads(await asyncio.wait_for(ws.recv(), timeout))
    if hello.get("type") != "hello":
        await ws.close()
        raise ConnectionError(f"first frame {hello}")
    return ws, hello["data"]


def percentile(values, p):
    """Nearest-rank percentile (p in 0..100) of a list; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))
    return ordered[int(rank) - 1]
