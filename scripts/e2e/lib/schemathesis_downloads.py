"""Explicit examples of the signed download route, checked by schemathesis' own conformance checks
(scripts/e2e/85-schemathesis.sh).

The fuzzer reaches `GET /files/{objectKey}` with the seeded key and signature (200, 403, 400), but never with the
conditional and range headers that make it answer 206, 304 and 416: those need the file's ETag and size. Each case
below is sent as a client would, then validated against openapi.yaml like a generated one.

    python3 schemathesis_downloads.py OPENAPI_YAML SIGNED_URL
"""

import sys
import urllib.parse

import requests
import schemathesis
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (content_type_conformance, response_schema_conformance,
                                               status_code_conformance)

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def main():
    spec_path, signed_url = sys.argv[1:3]
    operation = schemathesis.openapi.from_path(spec_path)["/files/{objectKey}"]["GET"]
    url = urllib.parse.urlsplit(signed_url)
    key = url.path.removeprefix("/files/")
    query = dict(urllib.parse.parse_qsl(url.query))
    base = f"{url.scheme}://{url.netloc}"

    whole = requests.get(signed_url, timeout=30)
    etag, size = whole.headers["ETag"], len(whole.content)
    altered = dict(query, sig="A" + query["sig"][1:] if query["sig"][0] != "A" else "B" + query["sig"][1:])
    examples = [
        # (what, query, headers, path, expected status)
        ("whole file", query, {}, key, 200),
        ("attachment", dict(query, download="1"), {}, key, 200),
        ("a range", query, {"Range": "bytes=0-9"}, key, 206),
        ("an open range", query, {"Range": f"bytes={size - 5}-"}, key, 206),
        ("If-Range with the ETag", query, {"Range": "bytes=0-9", "If-Range": etag}, key, 206),
        ("If-None-Match with the ETag", query, {"If-None-Match": etag}, key, 304),
        ("a range past the end", query, {"Range": f"bytes={size + 10}-{size + 20}"}, key, 416),
        ("an altered signature", altered, {}, key, 403),
        ("an expired URL", dict(query, exp="1"), {}, key, 403),
        ("an escaped key", query, {}, key.replace("/", "%2F"), 400),
    ]
    failures = 0
    for what, params, headers, path, expected in examples:
        response = requests.get(f"{base}/files/{path}", params=params, headers=headers, timeout=30)
        case = operation.Case(path_parameters={"objectKey": path}, query=params, headers=headers)
        problem = None
        if response.status_code != expected:
            problem = f"answered {response.status_code}, expected {expected}"
        else:
            try:
                case.validate_response(response, checks=CHECKS)
            except BaseExceptionGroup as error:  # schemathesis raises its check failures as a group
                problem = str(error)
        print(f"{'FAIL' if problem else 'ok  '} {what}: {response.status_code}" + (f" - {problem}" if problem else ""))
        failures += problem is not None
    print(f"{len(examples) - failures}/{len(examples)} download examples conform")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
