"""What the WebSocket e2e clients (realtime_client.py, rooms_client.py) share: JSON calls against an instance, the check
that ends a run with its reason, registering a user, and waiting for a frame. Every wait is bounded by TIMEOUT seconds."""
import asyncio
import json
import urllib.error
import urllib.request

TIMEOUT = 10


def rest(base, method, path, body=None, token=None, app_key=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    if app_key:
        request.add_header("X-App-Key", app_key)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def check(condition, what):
    if not condition:
        raise SystemExit("FAILED: " + what)


def register(base, app_key, username, platform="ios"):
    status, body = rest(base, "POST", "/api/auth/register",
                        {"username": username, "password": "e2e password 1", "platform": platform}, app_key=app_key)
    check(status == 200, f"register {username}: {status} {body}")
    return body["data"]


async def next_frame(ws, buffer, predicate, name, what, timeout=TIMEOUT):
    """The first frame `predicate` accepts: from `buffer` (frames read earlier and not awaited yet), else read from `ws`
    within `timeout` seconds, keeping the others in `buffer`; ends the run naming `name` and `what` otherwise."""
    for index, frame in enumerate(buffer):
        if predicate(frame):
            return buffer.pop(index)

    async def read():
        while True:
            frame = json.loads(await ws.recv())
            if predicate(frame):
                return frame
            buffer.append(frame)
    try:
        return await asyncio.wait_for(read(), timeout)
    except asyncio.TimeoutError:
        raise SystemExit(f"FAILED: {name} waited {timeout}s for {what}")
