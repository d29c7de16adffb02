#!/usr/bin/env python3
"""A mock of Firebase Cloud Messaging's HTTP v1 API and Google's OAuth 2.0 token endpoint, for Parley's push tests.

HTTP/1.1 on 127.0.0.1; one JSON line per request in the --record file:
  {"kind": "token"|"send", "path", "status", "reply", "claims"?, "message"?, "bearer"?}

POST /token (the service account's token_uri, overridden): a form with grant_type
urn:ietf:params:oauth:grant-type:jwt-bearer and an RS256 assertion signed by --public-key's private key, with
iss = --client-email, aud = --audience, scope naming firebase.messaging, iat and exp integers, exp after now,
exp - iat at most an hour                          else 400 {"error": "invalid_grant"}
  -> {"access_token", "expires_in": 3599, "token_type": "Bearer"}

POST /v1/projects/<--project>/messages:send:
  - authorization: Bearer <a token issued here, not revoked>       else 401 UNAUTHENTICATED
  - a JSON {"message": {...}} with a string token, data of strings, notification title/body strings, android
    priority high|normal, android ttl like "60s"                    else 400 INVALID_ARGUMENT (a field violation)
Token prefixes choose other answers: --unregistered-prefix (404 UNREGISTERED), --invalid-prefix (400
INVALID_ARGUMENT "The registration token is not a valid FCM registration token"), --fail-once-prefix (503
UNAVAILABLE on a token's first push). When the file --revoke-file exists, the next request deletes it and revokes
every token issued so far (a token revoked early: Parley must renew it).

Usage: mock_fcm.py --port-file F --record F --public-key PEM --client-email E --audience URL --project P
Needs cryptography (scripts/test installs it into .parley/venv).
"""
import argparse
import base64
import json
import os
import re
import time
import uuid

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from mock_http_base import form, serve

SCOPE = "https://www.googleapis.com/auth/firebase.messaging"


def b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def fcm_error(status, code, grpc, message, details):
    return status, {"error": {"code": status, "message": message, "status": grpc, "details": details}}


def fcm_code(code):
    return [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": code}]


def violation(field, description):
    return [{"@type": "type.googleapis.com/google.rpc.BadRequest",
             "fieldViolations": [{"field": field, "description": description}]}]


class FCM:
    def __init__(self, args):
        with open(args.public_key, "rb") as f:
            self.key = load_pem_public_key(f.read())
        self.args = args
        self.tokens = set()
        self.failed_once = set()

    def answer(self, method, path, headers, body):
        if self.args.revoke_file and os.path.exists(self.args.revoke_file):
            os.unlink(self.args.revoke_file)
            self.tokens.clear()
        if method == "POST" and path == "/token":
            status, reply, claims = self.token(body)
            return status, reply, {"kind": "token", "claims": claims}
        entry = {"kind": "send"}
        if method != "POST" or path != "/v1/projects/%s/messages:send" % self.args.project:
            status, reply = fcm_error(404, 404, "NOT_FOUND", "no such resource: %s" % path, [])
            return status, reply, entry
        status, reply = self.send(headers, body, entry)
        return status, reply, entry

    def token(self, body):
        fields = form(body)
        if fields.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return 400, {"error": "unsupported_grant_type"}, None
        parts = fields.get("assertion", "").split(".")
        if len(parts) != 3:
            return 400, {"error": "invalid_grant", "error_description": "malformed assertion"}, None
        try:
            header, claims, signature = json.loads(b64url(parts[0])), json.loads(b64url(parts[1])), b64url(parts[2])
            self.key.verify(signature, (parts[0] + "." + parts[1]).encode(), padding.PKCS1v15(), hashes.SHA256())
        except (ValueError, UnicodeDecodeError, InvalidSignature):
            return 400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}, None
        now = time.time()
        problems = []
        if header.get("alg") != "RS256":
            problems.append("alg")
        if claims.get("iss") != self.args.client_email:
            problems.append("iss")
        if claims.get("aud") != self.args.audience:
            problems.append("aud")
        if SCOPE not in str(claims.get("scope", "")).split(" "):
            problems.append("scope")
        iat, exp = claims.get("iat"), claims.get("exp")
        if not isinstance(iat, int) or not isinstance(exp, int) or exp <= now or exp - iat > 3600 or iat > now + 60:
            problems.append("iat/exp")
        if problems:
            return 400, {"error": "invalid_grant", "error_description": "bad " + ", ".join(problems)}, claims
        token = "ya29.mock-" + uuid.uuid4().hex
        self.tokens.add(token)
        return 200, {"access_token": token, "expires_in": 3599, "token_type": "Bearer"}, claims

    def send(self, headers, body, entry):
        authorization = headers.get("authorization", "")
        entry["bearer"] = authorization[len("Bearer "):] if authorization.startswith("Bearer ") else None
        try:
            message = json.loads(body)["message"]
        except (ValueError, KeyError, TypeError):
            message = None
        entry["message"] = message
        if entry["bearer"] not in self.tokens:
            return fcm_error(401, 401, "UNAUTHENTICATED", "Request had invalid authentication credentials.", [])
        if message is None:
            return fcm_error(400, 400, "INVALID_ARGUMENT", "Invalid JSON payload received.", [])
        problem = self.check(message)
        if problem:
            return fcm_error(400, 400, "INVALID_ARGUMENT", problem[1], violation(problem[0], problem[1]))
        token = message["token"]
        if token.startswith(self.args.unregistered_prefix):
            return fcm_error(404, 404, "NOT_FOUND", "Requested entity was not found.", fcm_code("UNREGISTERED"))
        if token.startswith(self.args.invalid_prefix):
            return fcm_error(400, 400, "INVALID_ARGUMENT",
                             "The registration token is not a valid FCM registration token",
                             fcm_code("INVALID_ARGUMENT"))
        if token.startswith(self.args.fail_once_prefix) and token not in self.failed_once:
            self.failed_once.add(token)
            return fcm_error(503, 503, "UNAVAILABLE", "The service is currently unavailable.", fcm_code("UNAVAILABLE"))
        return 200, {"name": "projects/%s/messages/%s" % (self.args.project, uuid.uuid4().hex)}

    @staticmethod
    def check(message):
        """(field, problem) of the first thing FCM would refuse, or None."""
        if not isinstance(message, dict):
            return "message", "not an object"
        if not isinstance(message.get("token"), str) or not message["token"]:
            return "message.token", "a message needs a token"
        data = message.get("data", {})
        if not isinstance(data, dict) or any(not isinstance(v, str) for v in data.values()):
            return "message.data", "data values must be strings"
        notification = message.get("notification")
        if notification is not None and (not isinstance(notification, dict) or any(
                k not in ("title", "body", "image") or not isinstance(v, str) for k, v in notification.items())):
            return "message.notification", "title, body and image are strings"
        android = message.get("android", {})
        if not isinstance(android, dict):
            return "message.android", "not an object"
        if android.get("priority", "normal").lower() not in ("high", "normal"):
            return "message.android.priority", "high or normal"
        if "ttl" in android and not re.fullmatch(r"\d+(\.\d+)?s", str(android["ttl"])):
            return "message.android.ttl", "a duration like \"60s\""
        return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--record", required=True)
    parser.add_argument("--public-key", required=True)
    parser.add_argument("--client-email", required=True)
    parser.add_argument("--audience", required=True)
    parser.add_argument("--project", required=True)
    parser.add_argument("--revoke-file")
    parser.add_argument("--unregistered-prefix", default="dead")
    parser.add_argument("--invalid-prefix", default="badd")
    parser.add_argument("--fail-once-prefix", default="fa11")
    args = parser.parse_args()
    serve(args.port_file, args.record, FCM(args).answer)


if __name__ == "__main__":
    main()
