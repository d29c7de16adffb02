#!/usr/bin/env python3
"""A mock of HMS Push Kit's server API and Huawei's OAuth 2.0 endpoint, for Parley's push tests.

HTTP/1.1 on 127.0.0.1; one JSON line per request in the --record file:
  {"kind": "token"|"send", "path", "status", "reply", "message"?, "bearer"?}

POST /oauth2/v3/token: a form with grant_type client_credentials, client_id = --app-id and client_secret =
--client-secret                                   else 400 {"error": 1101, "error_description": "invalid client"}
  -> {"access_token", "expires_in": 3600, "token_type": "Bearer"}

POST /v1/<--app-id>/messages:send:
  - authorization: Bearer <a token issued here, not revoked>     else 401 {"code": "80200003"} (token expired)
  - {"validate_only": false, "message": {"token": [one or more strings], "data": a string holding JSON,
    "android": {...}}} where a notification has a title, a body and click_action.type 1-4, and a message without
    one has urgency HIGH or NORMAL                  else 400 {"code": "80100001"} / "80300010" (no token)
Tokens starting with --invalid-prefix answer 80300007 (all tokens invalid); --fail-once-prefix 503 once. When the
file --revoke-file exists, the next request deletes it and revokes every token issued so far.

Usage: mock_hms.py --port-file F --record F --app-id ID --client-secret S
"""
import argparse
import json
import os
import uuid

from mock_http_base import form, serve


def push_kit(code, msg):
    return {"code": code, "msg": msg, "requestId": uuid.uuid4().hex}


class HMS:
    def __init__(self, args):
        self.args = args
        self.tokens = set()
        self.failed_once = set()

    def answer(self, method, path, headers, body):
        if self.args.revoke_file and os.path.exists(self.args.revoke_file):
            os.unlink(self.args.revoke_file)
            self.tokens.clear()
        if method == "POST" and path == "/oauth2/v3/token":
            status, reply = self.token(body)
            return status, reply, {"kind": "token"}
        entry = {"kind": "send"}
        if method != "POST" or path != "/v1/%s/messages:send" % self.args.app_id:
            return 404, push_kit("80100001", "no such path"), entry
        status, reply = self.send(headers, body, entry)
        return status, reply, entry

    def token(self, body):
        fields = form(body)
        if fields.get("grant_type") != "client_credentials":
            return 400, {"error": 1102, "error_description": "unsupported grant_type"}
        if fields.get("client_id") != self.args.app_id or fields.get("client_secret") != self.args.client_secret:
            return 400, {"error": 1101, "error_description": "invalid client"}
        token = "hms-mock-" + uuid.uuid4().hex
        self.tokens.add(token)
        return 200, {"access_token": token, "expires_in": 3600, "token_type": "Bearer"}

    def send(self, headers, body, entry):
        authorization = headers.get("authorization", "")
        entry["bearer"] = authorization[len("Bearer "):] if authorization.startswith("Bearer ") else None
        try:
            request = json.loads(body)
            message = request["message"]
        except (ValueError, KeyError, TypeError):
            request = message = None
        entry["message"] = message
        if entry["bearer"] not in self.tokens:
            return 401, push_kit("80200003", "Oauth Token expired")
        if message is None:
            return 400, push_kit("80100003", "Incorrect message structure")
        problem = self.check(request, message)
        if problem:
            return 400, push_kit(problem[0], problem[1])
        token = message["token"][0]
        if token.startswith(self.args.invalid_prefix):
            return 200, push_kit("80300007", "All the tokens are invalid")
        if token.startswith(self.args.fail_once_prefix) and token not in self.failed_once:
            self.failed_once.add(token)
            return 503, push_kit("81000001", "System internal error")
        return 200, push_kit("80000000", "Success")

    @staticmethod
    def check(request, message):
        """(code, problem) of the first thing Push Kit would refuse, or None."""
        if request.get("validate_only") is not False:
            return "80100001", "validate_only must be false"
        tokens = message.get("token") if isinstance(message, dict) else None
        if not isinstance(tokens, list) or not tokens or any(not isinstance(t, str) or not t for t in tokens):
            return "80300010", "The number of tokens in the message body exceeds the default value"
        data = message.get("data")
        if data is not None:
            try:
                if not isinstance(data, str):
                    raise ValueError
                json.loads(data)
            except ValueError:
                return "80100001", "data must be a string holding JSON"
        android = message.get("android", {})
        if not isinstance(android, dict):
            return "80100001", "android must be an object"
        notification = android.get("notification")
        if notification is not None:
            if not isinstance(notification.get("title"), str) or not notification["title"] \
                    or not isinstance(notification.get("body"), str) or not notification["body"]:
                return "80100001", "a notification needs a title and a body"
            if (notification.get("click_action") or {}).get("type") not in (1, 2, 3, 4):
                return "80100001", "click_action.type must be 1-4"
        elif android.get("urgency") not in ("HIGH", "NORMAL"):
            return "80100001", "a data message needs urgency HIGH or NORMAL"
        return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--record", required=True)
    parser.add_argument("--app-id", required=True)
    parser.add_argument("--client-secret", required=True)
    parser.add_argument("--revoke-file")
    parser.add_argument("--invalid-prefix", default="badd")
    parser.add_argument("--fail-once-prefix", default="fa11")
    args = parser.parse_args()
    serve(args.port_file, args.record, HMS(args).answer)


if __name__ == "__main__":
    main()
