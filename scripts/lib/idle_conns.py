#!/usr/bin/env python3
"""Measure a server's memory per idle keep-alive HTTP connection (used by scripts/bench).

Opens COUNT connections; each sends one `GET PATH` keep-alive request and reads the full answer (HTTP 200 with a
Content-Length), then stays idle. With all of them open, the server's VmRSS (/proc/PID/status) is sampled and
compared with the value before. Then every connection is checked: none may have been closed or errored while idle,
and each must still answer a second request. Finally all are closed.

Prints `key=value` lines on stdout (parsed by scripts/bench); progress and errors go to stderr.
Standard library only.
"""

import argparse
import asyncio
import os
import resource
import sys
import time


def status_kb(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{key} not found for pid {pid}")


def fd_count(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return -1


class Failure(Exception):
    pass


async def exchange(reader, writer, request, timeout):
    writer.write(request)
    await writer.drain()
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
    lines = head.split(b"\r\n")
    parts = lines[0].split()
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
        raise Failure(f"bad status line {lines[0][:80]!r}")
    status = int(parts[1])
    length = None
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        value = value.strip().lower()
        if name == b"content-length":
            length = int(value)
        elif name == b"connection" and value == b"close":
            raise Failure("server answered with Connection: close")
        elif name == b"transfer-encoding" and b"chunked" in value:
            raise Failure("chunked answer (expected Content-Length)")
    if length is None:
        raise Failure("answer without Content-Length")
    await asyncio.wait_for(reader.readexactly(length), timeout)
    if status != 200:
        raise Failure(f"HTTP {status}")


async def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True, help="server process whose VmRSS is sampled")
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--path", default="/healthz")
    ap.add_argument("--hold", type=float, default=5.0, help="seconds to keep them idle before checking")
    ap.add_argument("--concurrency", type=int, default=200, help="connections being opened at once")
    ap.add_argument("--timeout", type=float, default=10.0)
    args = ap.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, 65536) if hard != resource.RLIM_INFINITY else 65536
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    if want < args.count + 64:
        print(f"error: open files limit {want} is too low for {args.count} connections", file=sys.stderr)
        return 2

    request = f"GET {args.path} HTTP/1.1\r\nHost: {args.host}:{args.port}\r\nConnection: keep-alive\r\n\r\n".encode()
    rss_before = status_kb(args.pid, "VmRSS")
    fds_before = fd_count(args.pid)

    sem = asyncio.Semaphore(args.concurrency)
    errors = {}

    def note(kind, exc):
        key = f"{kind}: {type(exc).__name__}: {exc}"[:160]
        errors[key] = errors.get(key, 0) + 1

    async def open_one():
        async with sem:
            try:
                reader, writer = await asyncio.wait_for(asyncio.open_connection(args.host, args.port), args.timeout)
            except Exception as exc:  # noqa: BLE001 - every failure is counted and reported
                note("connect", exc)
                return None
            try:
                await exchange(reader, writer, request, args.timeout)
            except Exception as exc:  # noqa: BLE001
                note("first request", exc)
                writer.close()
                return None
            return reader, writer

    t0 = time.monotonic()
    results = await asyncio.gather(*(open_one() for _ in range(args.count)))
    conns = [c for c in results if c is not None]
    open_seconds = time.monotonic() - t0
    print(f"opened {len(conns)}/{args.count} connections in {open_seconds:.1f}s; idle for {args.hold:g}s",
          file=sys.stderr)

    await asyncio.sleep(args.hold)
    samples = []
    for _ in range(5):
        samples.append(status_kb(args.pid, "VmRSS"))
        await asyncio.sleep(0.2)
    rss_open = max(samples)
    fds_open = fd_count(args.pid)

    # Closed or errored while idle?
    closed_idle = 0
    for reader, _ in conns:
        if reader.at_eof() or reader.exception() is not None:
            closed_idle += 1

    # Still usable?
    second_failed = 0

    async def again(reader, writer):
        nonlocal second_failed
        async with sem:
            try:
                await exchange(reader, writer, request, args.timeout)
            except Exception as exc:  # noqa: BLE001
                note("second request", exc)
                second_failed += 1

    await asyncio.gather(*(again(r, w) for r, w in conns))

    for _, writer in conns:
        writer.close()
    await asyncio.gather(*(w.wait_closed() for _, w in conns), return_exceptions=True)
    await asyncio.sleep(2)
    rss_after = status_kb(args.pid, "VmRSS")

    opened = len(conns)
    per_conn = (rss_open - rss_before) * 1024 / opened if opened else 0
    for message, n in sorted(errors.items(), key=lambda kv: -kv[1])[:10]:
        print(f"  {n} x {message}", file=sys.stderr)
    out = {
        "idle_requested": args.count,
        "idle_opened": opened,
        "idle_failed_open": args.count - opened,
        "idle_closed_while_idle": closed_idle,
        "idle_second_request_failed": second_failed,
        "idle_open_seconds": f"{open_seconds:.1f}",
        "idle_hold_seconds": f"{args.hold:g}",
        "rss_before_kb": rss_before,
        "rss_open_kb": rss_open,
        "rss_after_close_kb": rss_after,
        "fds_before": fds_before,
        "fds_open": fds_open,
        "bytes_per_conn": f"{per_conn:.0f}",
    }
    for key, value in out.items():
        print(f"{key}={value}")
    ok = opened == args.count and closed_idle == 0 and second_failed == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
