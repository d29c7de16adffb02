"""What the WebSocket e2e clients (realtime_client.py, rooms_client.py) share: JSON calls against an instance, the check
that ends a run with its reason, and registering a user. Every call is bounded by TIMEOUT seconds."""
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
