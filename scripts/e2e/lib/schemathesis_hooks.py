"""Schemathesis hooks for scripts/e2e/85-schemathesis.sh (loaded through SCHEMATHESIS_HOOKS).

- Signed server-to-server operations (security `signedRequest`: `/api/im/auth/login`, `/api/admin/releases...`) get
  their signature headers computed over the request exactly as it goes out (method, path with query as sent,
  SHA-256 of the serialized body). Schemathesis cannot compute an HMAC itself, so without this every one of them
  would only ever answer 401. Cases that test a missing header, or a timestamp, nonce or signature that breaks its
  documented pattern, keep it (the server must refuse them); the other refusals (stale timestamp, replayed nonce,
  wrong key) are covered by Tests/ParleyAuthTests/SignedRequestTests.swift.
- Downloads (`GET /files/{objectKey}`): schemathesis percent-encodes the slashes of a path parameter, and an object
  key spans several path segments; the server rightly refuses an escaped key (1307). The hook sends the slashes as
  they are, so that the seeded key and its signed URL reach the file (200); schemathesis_downloads.py adds the
  range and conditional answers.
- Unbinding a push token by path: the seeded token is bound to the fuzzing user's session again first (any push
  token bound by the fuzzer since replaced it: a session keeps one token per vendor).
- Operations that end sessions (logout, logout-all, ending a session by id) and the refresh-token exchange run as a
  throwaway user with a fresh session each time: with the fuzzing user's own token the first logout would turn every
  later operation into a 401, and a refresh with its refresh token would end its session (reuse detection).

Environment: PARLEY_ST_BASE (server origin), PARLEY_ST_APP_KEY, PARLEY_ST_APP_SECRET, PARLEY_ST_TOKEN (the fuzzing
user's access token), PARLEY_ST_PUSH_TOKEN (the push token seeded for it), PARLEY_ST_THROWAWAY_USER and
PARLEY_ST_THROWAWAY_PASSWORD (an account of the app registered by schemathesis_seed.py).
"""

import hashlib
import hmac
import itertools
import json
import os
import re
import secrets
import time
import urllib.parse
import urllib.request

import requests
import schemathesis

BASE = os.environ["PARLEY_ST_BASE"]
APP_KEY = os.environ["PARLEY_ST_APP_KEY"]
APP_SECRET = os.environ["PARLEY_ST_APP_SECRET"]
TOKEN = os.environ["PARLEY_ST_TOKEN"]
PUSH_TOKEN = os.environ["PARLEY_ST_PUSH_TOKEN"]
THROWAWAY_USER = os.environ["PARLEY_ST_THROWAWAY_USER"]
THROWAWAY_PASSWORD = os.environ["PARLEY_ST_THROWAWAY_PASSWORD"]

_calls = itertools.count()


class SignedRequest(requests.auth.AuthBase):
    """requests' last step before sending: the prepared request holds the final target and body bytes."""

    # The documented patterns (openapi.yaml, components/parameters): a value outside them is a negative case.
    VALID = {"X-Timestamp": re.compile(r"[0-9]+"), "X-Nonce": re.compile(r"[A-Za-z0-9_.@-]{8,128}"),
             "X-Signature": re.compile(r"[0-9a-f]{64}")}

    def __call__(self, request):
        headers = request.headers

        def fill(name, value):
            pattern = self.VALID.get(name)
            if name in headers and (pattern is None or pattern.fullmatch(headers[name])):
                headers[name] = value

        fill("X-App-Key", APP_KEY)
        fill("X-Timestamp", str(int(time.time())))
        # Fresh per request: a nonce is refused when reused within the window.
        fill("X-Nonce", "st-" + secrets.token_hex(12))
        body = request.body or b""
        if isinstance(body, str):
            body = body.encode()
        message = "\n".join([request.method, request.path_url, headers.get("X-Timestamp", ""),
                              headers.get("X-Nonce", ""), hashlib.sha256(body).hexdigest()])
        fill("X-Signature", hmac.new(APP_SECRET.encode(), message.encode(), hashlib.sha256).hexdigest())
        return request


class SlashesUnescaped(requests.auth.AuthBase):
    def __call__(self, request):
        parts = urllib.parse.urlsplit(request.url)
        path = re.sub("%2[Ff]", "/", parts.path)
        request.url = urllib.parse.urlunsplit(parts._replace(path=path))
        return request


def _post(path, body, headers):
    request = urllib.request.Request(BASE + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", **headers})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())["data"]


def _throwaway_session():
    """A new session of the throwaway user (the app never displaces sessions; a random platform all the same)."""
    platform = "p" + secrets.token_hex(6)
    return _post("/api/auth/login", {"username": THROWAWAY_USER, "password": THROWAWAY_PASSWORD, "platform": platform},
                 {"X-App-Key": APP_KEY})


def _security_schemes(operation):
    requirements = operation.definition.raw.get("security", [])
    return {name for requirement in requirements for name in requirement}


@schemathesis.hook
def before_call(context, case, kwargs):
    operation = case.operation
    if "signedRequest" in _security_schemes(operation):
        kwargs["auth"] = SignedRequest()
        return
    operation_id = operation.definition.raw.get("operationId")
    if operation_id == "downloadFile":
        kwargs["auth"] = SlashesUnescaped()
    elif operation_id == "unbindPushToken" and (case.path_parameters or {}).get("token") == PUSH_TOKEN:
        _post("/api/push/tokens", {"token": PUSH_TOKEN, "vendor": "apns"}, {"Authorization": "Bearer " + TOKEN})
    elif operation_id in ("logout", "logoutAll", "endSession", "refresh"):
        session = _throwaway_session()
        # Only where the case carries a token: cases that test a missing or malformed one keep theirs.
        if case.headers and case.headers.get("Authorization", "").startswith("Bearer ey"):
            case.headers["Authorization"] = "Bearer " + session["accessToken"]
        # Every other call names a session or refresh token that exists, the rest keep the generated value.
        if next(_calls) % 2 == 0:
            if operation_id == "endSession":
                case.path_parameters["id"] = _throwaway_session()["sessionId"]
            elif operation_id == "refresh" and isinstance(case.body, dict):
                case.body["refreshToken"] = session["refreshToken"]
