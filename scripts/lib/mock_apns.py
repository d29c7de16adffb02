#!/usr/bin/env python3
"""A mock of Apple's push notification service (the HTTP/2 provider API) for Parley's push tests.

Speaks HTTP/2 in cleartext with prior knowledge (h2c, no TLS) on 127.0.0.1, or with --tls-cert/--tls-key over TLS
negotiated by ALPN (h2), checks each request as APNs would, and appends one JSON line per request to the --record
file:
  {"path", "token", "headers", "payload", "status", "reason", "kid", "iss", "certificate"}

With --client-ca the TLS handshake requires a client certificate that CA issued (APNs' certificate-based
authentication): a request without an `authorization` header is then authenticated by that certificate, whose
subject CN must be the request's topic (without `.voip`); "certificate" records the CN.

Checks, with APNs' own answers:
  - POST /3/device/<hex token>                                  else 405 MethodNotAllowed / 404 BadPath
  - authorization: bearer <ES256 JWT> whose kid is one of --key, signed by that key, iss = its team, iat within
    an hour                                                     else 403 InvalidProviderToken / MissingProviderToken
  - apns-topic present; `<bundle>.voip` for apns-push-type voip  else 400 MissingTopic / BadTopic
  - apns-push-type alert or voip, apns-priority 5 or 10, apns-expiration an integer, apns-collapse-id <= 64 bytes
  - the body a JSON object with "aps", at most 4096 bytes (5120 for VoIP)    else 400 / 413 PayloadTooLarge
Token prefixes choose other answers (tokens are hex): --bad-token-prefix (400 BadDeviceToken),
--unregistered-prefix (410 Unregistered), --fail-once-prefix (503 ServiceUnavailable on a token's first push).

Usage: mock_apns.py --port-file F --record F [--key KID:TEAM:PUBLIC_KEY_PEM_FILE ...]
                   [--tls-cert PEM --tls-key PEM [--client-ca PEM]]
Needs h2 and cryptography (scripts/test installs them into .parley/venv).
"""
import argparse
import asyncio
import base64
import json
import os
import signal
import ssl
import time
import uuid

import h2.config
import h2.connection
import h2.events
import h2.exceptions
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, utils
from cryptography.hazmat.primitives.serialization import load_pem_public_key


def b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Checker:
    def __init__(self, args):
        self.keys = {}
        for spec in args.key:
            kid, team, path = spec.split(":", 2)
            with open(path, "rb") as f:
                self.keys[kid] = (team, load_pem_public_key(f.read()))
        self.args = args
        self.failed_once = set()
        self.record = open(args.record, "a", buffering=1)

    def verify_jwt(self, authorization):
        """(kid, iss) of a valid provider token, else raises ValueError with APNs' reason."""
        if not authorization.startswith("bearer "):
            raise ValueError("MissingProviderToken")
        parts = authorization[len("bearer "):].split(".")
        if len(parts) != 3:
            raise ValueError("InvalidProviderToken")
        try:
            header, claims, signature = json.loads(b64url(parts[0])), json.loads(b64url(parts[1])), b64url(parts[2])
        except (ValueError, UnicodeDecodeError):
            raise ValueError("InvalidProviderToken")
        kid = header.get("kid")
        if header.get("alg") != "ES256" or kid not in self.keys or len(signature) != 64:
            raise ValueError("InvalidProviderToken")
        team, key = self.keys[kid]
        if claims.get("iss") != team or not isinstance(claims.get("iat"), int):
            raise ValueError("InvalidProviderToken")
        if abs(time.time() - claims["iat"]) > 3600:
            raise ValueError("ExpiredProviderToken")
        der = utils.encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
        try:
            key.verify(der, (parts[0] + "." + parts[1]).encode(), ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            raise ValueError("InvalidProviderToken")
        return kid, team

    def answer(self, headers, body, certificate=None):
        """(status, reason or None, record fields); `certificate` is the CN of the client's certificate."""
        path = headers.get(":path", "")
        token = path[len("/3/device/"):] if path.startswith("/3/device/") else ""
        entry = {"path": path, "token": token,
                 "headers": {k: v for k, v in headers.items() if not k.startswith(":")}}
        try:
            entry["payload"] = json.loads(body) if body else None
        except ValueError:
            entry["payload"] = None
        if certificate is not None:
            entry["certificate"] = certificate
        status, reason = self.check(headers, body, token, entry, certificate)
        entry["status"], entry["reason"] = status, reason
        self.record.write(json.dumps(entry) + "\n")
        return status, reason

    def check(self, headers, body, token, entry, certificate):
        if headers.get(":method") != "POST":
            return 405, "MethodNotAllowed"
        if not token or any(c not in "0123456789abcdef" for c in token):
            return 404, "BadPath"
        push_type = headers.get("apns-push-type")
        topic = headers.get("apns-topic")
        if certificate is not None and "authorization" not in headers:
            # Certificate-based: the certificate names the app; its topics are the bundle id and `<bundle>.voip`.
            if topic not in (certificate, certificate + ".voip"):
                return 400, "TopicDisallowed"
        else:
            try:
                entry["kid"], entry["iss"] = self.verify_jwt(headers.get("authorization", ""))
            except ValueError as reason:
                return 403, str(reason)
        if push_type not in ("alert", "voip"):
            return 400, "InvalidPushType"
        if not topic:
            return 400, "MissingTopic"
        if (push_type == "voip") != topic.endswith(".voip"):
            return 400, "BadTopic"
        if headers.get("apns-priority") not in ("5", "10"):
            return 400, "BadPriority"
        if not headers.get("apns-expiration", "").isdigit():
            return 400, "BadExpirationDate"
        if len(headers.get("apns-collapse-id", "").encode()) > 64:
            return 400, "BadCollapseId"
        if len(body) > (5120 if push_type == "voip" else 4096):
            return 413, "PayloadTooLarge"
        if not isinstance(entry["payload"], dict) or "aps" not in entry["payload"]:
            return 400, "PayloadEmpty"
        if token.startswith(self.args.bad_token_prefix):
            return 400, "BadDeviceToken"
        if token.startswith(self.args.unregistered_prefix):
            return 410, "Unregistered"
        if token.startswith(self.args.fail_once_prefix) and token not in self.failed_once:
            self.failed_once.add(token)
            return 503, "ServiceUnavailable"
        return 200, None


class Connection(asyncio.Protocol):
    def __init__(self, checker):
        self.checker = checker
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        self.streams = {}

    def connection_made(self, transport):
        self.transport = transport
        self.certificate = None
        tls = transport.get_extra_info("ssl_object")
        peer = tls.getpeercert() if tls is not None else None
        if peer:
            names = dict(pair for rdn in peer.get("subject", ()) for pair in rdn)
            self.certificate = names.get("commonName")
        self.h2.initiate_connection()
        transport.write(self.h2.data_to_send())

    def data_received(self, data):
        try:
            events = self.h2.receive_data(data)
        except h2.exceptions.ProtocolError:
            self.transport.write(self.h2.data_to_send())
            self.transport.close()
            return
        for event in events:
            if isinstance(event, h2.events.RequestReceived):
                self.streams[event.stream_id] = (dict(event.headers), bytearray())
                if event.stream_ended:
                    self.respond(event.stream_id)
            elif isinstance(event, h2.events.DataReceived):
                self.streams[event.stream_id][1].extend(event.data)
                self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                self.respond(event.stream_id)
            elif isinstance(event, h2.events.ConnectionTerminated):
                self.transport.close()
        self.transport.write(self.h2.data_to_send())

    def respond(self, stream_id):
        headers, body = self.streams.pop(stream_id, ({}, b""))
        status, reason = self.checker.answer(headers, bytes(body), self.certificate)
        reply = json.dumps({"reason": reason}).encode() if reason else b""
        response_headers = [(":status", str(status)), ("apns-id", str(uuid.uuid4()).upper())]
        if reply:
            response_headers.append(("content-type", "application/json"))
        self.h2.send_headers(stream_id, response_headers, end_stream=not reply)
        if reply:
            self.h2.send_data(stream_id, reply, end_stream=True)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--record", required=True)
    parser.add_argument("--key", action="append", default=[], help="KID:TEAM:PEM_FILE of a provider key")
    parser.add_argument("--bad-token-prefix", default="badd")
    parser.add_argument("--unregistered-prefix", default="dead")
    parser.add_argument("--fail-once-prefix", default="fa11")
    parser.add_argument("--tls-cert", help="PEM certificate of the server (with --tls-key): speak TLS with ALPN h2")
    parser.add_argument("--tls-key")
    parser.add_argument("--client-ca", help="PEM of the CA whose client certificates the TLS handshake requires")
    args = parser.parse_args()
    checker = Checker(args)
    context = None
    if args.tls_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
        context.set_alpn_protocols(["h2"])
        if args.client_ca:
            context.load_verify_locations(args.client_ca)
            context.verify_mode = ssl.CERT_REQUIRED
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Connection(checker), "127.0.0.1", 0, ssl=context)
    port = server.sockets[0].getsockname()[1]
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(port))
    os.rename(args.port_file + ".tmp", args.port_file)
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    server.close()


if __name__ == "__main__":
    asyncio.run(main())
