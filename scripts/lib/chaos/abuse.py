"""abuse: a well-behaved client's latency before and during four kinds of abuse of one instance.

Phases of --phase seconds each, a second apart: baseline, slowloris, oversized headers, a connection flood past
PARLEY_MAX_CONNECTIONS, a WebSocket client that never reads, and a baseline after. The probe (probe.py, its own
process) runs throughout; each phase's samples are the ones that started inside it. Pass, per abuse phase: the probe
saw no error, its p99 of each kind stayed under max(factor x the baseline's p99, floor), and the server did what it
documents (408 + close past the header timeout, 431, 503 past the connection limit, close 4000 for the stalled
WebSocket).
"""
import asyncio
import base64
import collections
import json
import os
import re
import socket
import subprocess
import sys
import time

from fleet import register_users
from net import Failed, HTTPClient, percentile, rest
from probe import KINDS, read_samples


def _host_port(base):
    host, port = base.split("://", 1)[1].rsplit(":", 1)
    return host, int(port)


async def _status_of(reader, timeout):
    """The status of the answer on `reader` (0: EOF or reset without one, None: nothing within timeout)."""
    try:
        line = await asyncio.wait_for(reader.readline(), timeout)
    except asyncio.TimeoutError:
        return None
    except (ConnectionResetError, OSError):
        return 0
    match = re.match(rb"HTTP/1\.[01] (\d{3})", line)
    return int(match.group(1)) if match else 0


async def slowloris(base, until, count, header_timeout):
    """`count` connections that send a request head one byte every 0.5 s and never finish it; each one the server
    closes is replaced. Every connection must be answered (408) and closed within the header timeout plus the
    server's 0.5 s sweep and a margin."""
    host, port = _host_port(base)
    limit = header_timeout + 2.0
    stats = collections.Counter()
    lifetimes = []

    async def one():
        while time.monotonic() < until:
            try:
                reader, writer = await asyncio.open_connection(host, port)
            except OSError:
                stats["connect_errors"] += 1
                await asyncio.sleep(0.2)
                continue
            opened = time.monotonic()
            stats["opened"] += 1
            answer = asyncio.ensure_future(_status_of(reader, until - opened + limit))
            head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 10000
            for i in range(len(head)):
                if answer.done() or time.monotonic() >= until:
                    break
                writer.write(head[i:i + 1])
                await asyncio.wait([answer], timeout=0.5)
            lived = time.monotonic() - opened
            if answer.done():
                stats[f"status_{answer.result()}"] += 1
                lifetimes.append(lived)
            else:
                answer.cancel()
                stats["open_at_end"] += 1
            stats["over_limit"] += lived > limit
            writer.close()

    tasks = []
    for i in range(count):
        tasks.append(asyncio.ensure_future(one()))
        if i % 50 == 49:
            await asyncio.sleep(0.05)
    await asyncio.gather(*tasks)
    figures = dict(stats)
    figures.update({"connections": count, "closed_after_p50_s": _round(percentile(lifetimes, 50)),
                    "closed_after_max_s": _round(max(lifetimes) if lifetimes else None)})
    failures = []
    if stats["over_limit"]:
        failures.append(f"{stats['over_limit']} slowloris connections outlived the header timeout + 2 s")
    if not stats["status_408"]:
        failures.append("no slowloris connection was answered 408")
    return figures, failures


async def oversized(base, until, header_bytes=32 * 1024, workers=4):
    """Requests whose header fields exceed the 16 KiB limit, one after another on new connections: each must be
    answered 431."""
    host, port = _host_port(base)
    stats = collections.Counter()

    async def one():
        while time.monotonic() < until:
            try:
                reader, writer = await asyncio.open_connection(host, port)
                writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * header_bytes + b"\r\n\r\n")
                await writer.drain()
                status = await _status_of(reader, 5)
            except OSError:
                status = 0
                writer = None
            stats[f"status_{status}"] += 1
            if writer is not None:
                writer.close()
            await asyncio.sleep(0.02)

    await asyncio.gather(*(one() for _ in range(workers)))
    figures = dict(stats)
    failures = []
    other = sum(n for k, n in stats.items() if k != "status_431")
    if other or not stats["status_431"]:
        failures.append(f"oversized headers: expected only 431, got {dict(stats)}")
    return figures, failures


async def flood(base, until, max_connections, extra):
    """Opens max_connections + extra connections and holds them; past the limit the server must answer 503 (code
    1503) and close at once. Then keeps trying one more connection every 50 ms until the phase ends."""
    host, port = _host_port(base)
    held, stats = [], collections.Counter()

    async def attempt():
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError:
            stats["connect_errors"] += 1
            return
        status = await _status_of(reader, 0.5)
        if status is None:
            held.append(writer)
        else:
            stats[f"status_{status}"] += 1
            writer.close()

    total = max_connections + extra
    for start in range(0, total, 100):
        await asyncio.gather(*(attempt() for _ in range(min(100, total - start))))
    stats["held"] = len(held)
    initial = dict(stats)
    while time.monotonic() < until:
        await attempt()
        await asyncio.sleep(0.05)
    stats["held_at_end"] = len(held)
    for writer in held:
        writer.close()
    figures = dict(stats)
    figures["initial"] = initial
    failures = []
    if initial.get("held", 0) > max_connections:
        failures.append(f"{initial['held']} connections held, more than the limit {max_connections}")
    refused = initial.get("status_503", 0)
    if refused < extra:
        failures.append(f"only {refused} of the {extra}+ connections past the limit were refused with 503: {initial}")
    unexpected = {k: v for k, v in stats.items() if k.startswith("status_") and k != "status_503"}
    if unexpected:
        failures.append(f"flood: answers other than 503: {unexpected}")
    return figures, failures


def _cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime, in clock ticks


async def fd_flood(base, pid, until, fd_limit, extra):
    """Against an instance with only `fd_limit` descriptors and the default PARLEY_MAX_CONNECTIONS: the server must
    lower its limit below the descriptor limit, so that the flood is answered 503 instead of making accept fail
    (EMFILE) on a listener that stays readable, and must not burn CPU while the flood holds its connections."""
    allowed = max(1, fd_limit - max(64, fd_limit // 10))  # HTTPServer.connectionsAllowed(byOpenFilesLimit:)
    ticks, started = _cpu_ticks(pid), time.monotonic()
    figures, failures = await flood(base, until, allowed, extra)
    cpu = (_cpu_ticks(pid) - ticks) / os.sysconf("SC_CLK_TCK") / (time.monotonic() - started)
    figures["server_cpu_pct"] = round(cpu * 100, 1)
    figures["allowed"] = allowed
    if cpu > 0.5:
        failures.append(f"the instance out of descriptors used {cpu * 100:.0f}% CPU while the flood held on")
    return figures, failures


async def _stalled_socket(base, im_token):
    """A WebSocket that completes the handshake and then never reads (a tiny receive buffer, so the server's queue
    fills soon)."""
    host, port = _host_port(base)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await asyncio.wait_for(loop.sock_connect(sock, (host, port)), 5)
    key = base64.b64encode(os.urandom(16)).decode()
    request = (f"GET /ws HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer {im_token}\r\n\r\n")
    await loop.sock_sendall(sock, request.encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = await asyncio.wait_for(loop.sock_recv(sock, 1), 5)
        if not chunk:
            raise Failed("stalled client: connection closed during the handshake")
        head += chunk
    if not head.startswith(b"HTTP/1.1 101"):
        raise Failed(f"stalled client: handshake answered {head[:100]!r}")
    return sock


def _closes_4000(metrics_text):
    match = re.search(r'^parley_websocket_closes_total\{code="4000"\} (\d+)', metrics_text, re.M)
    return int(match.group(1)) if match else 0


async def stalled(base, until, stalled_session, sender_session):
    """A client that stopped reading while messages (90 KB each, ~40/s) are sent to it: the server must close it
    with 4000 once its bounded queue overflows; it then reconnects and stalls again, until the phase ends."""
    metrics = HTTPClient(base)
    sender = HTTPClient(base)
    before = _closes_4000((await metrics.request("GET", "/metrics")).body.decode())
    stats = collections.Counter()
    text = "x" * 90000
    sock = await _stalled_socket(base, stalled_session["imToken"])
    stats["connections"] = 1
    seen = before
    n = 0
    while time.monotonic() < until:
        started = time.monotonic()
        answer = await sender.request("POST", "/api/im/messages",
                                      {"toId": stalled_session["user"]["id"], "chatType": "single", "msgType": "text",
                                       "content": text, "clientMsgId": f"stall-{n}"},
                                      token=sender_session["accessToken"])
        n += 1
        stats[f"send_status_{answer.status}"] += 1
        if n % 10 == 0:
            now = _closes_4000((await metrics.request("GET", "/metrics")).body.decode())
            if now > seen:
                seen = now
                sock.close()
                sock = await _stalled_socket(base, stalled_session["imToken"])
                stats["connections"] += 1
        await asyncio.sleep(max(0.0, 0.025 - (time.monotonic() - started)))
    sock.close()
    await asyncio.sleep(0.5)
    stats["closed_4000"] = _closes_4000((await metrics.request("GET", "/metrics")).body.decode()) - before
    await metrics.close()
    await sender.close()
    failures = []
    if stats["closed_4000"] < 1:
        failures.append(f"the client that never reads was not closed with 4000: {dict(stats)}")
    bad = {k: v for k, v in stats.items() if k.startswith("send_status_") and k != "send_status_201"}
    if bad:
        failures.append(f"sends to the stalled client failed: {bad}")
    return dict(stats), failures


def _round(value, digits=2):
    return None if value is None else round(value, digits)


def _phase_stats(samples, start, end):
    result = {}
    for kind in KINDS:
        values = [ms for t, k, ms, ok in samples if k == kind and start <= t - ms / 1000 < end]
        errors = sum(1 for t, k, ms, ok in samples if k == kind and start <= t - ms / 1000 < end and not ok)
        result[kind] = {"count": len(values), "errors": errors, "p50_ms": _round(percentile(values, 50)),
                        "p99_ms": _round(percentile(values, 99)), "max_ms": _round(max(values) if values else None)}
    return result


async def run(args):
    base = args.bases.split(",")[0]
    log = args.log
    probe_user, stalled_user, sender_user = await register_users([base], args.app_key, "ab", 3)
    # Every user is someone's contact: the probe's conversation list is not empty.
    await rest(base, "POST", "/api/im/messages", {"toId": probe_user["user"]["id"], "chatType": "single",
                                                  "msgType": "text", "content": "hello", "clientMsgId": "hello"},
               token=sender_user["accessToken"])
    session_file = args.out + ".probe-session"
    samples_file = args.out + ".probe-samples"
    with open(session_file, "w") as f:
        json.dump(probe_user, f)
    phase = args.phase
    total = 7 * (phase + 1) + 30
    # The probe stands for a client on another machine, and the abusers for other machines: on this shared two-core
    # box the probe gets a higher CPU priority and the abusers a lower one, so that neither's scheduling is what
    # the figures measure (the server keeps the default priority).
    probe = subprocess.Popen([sys.executable, "-m", "chaos", "probe", "--base", base, "--session", session_file,
                              "--samples", samples_file, "--seconds", str(total)],
                             env={**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(__file__))},
                             preexec_fn=lambda: _renice(-5))
    _renice(5)
    try:
        for _ in range(100):
            if os.path.exists(samples_file) and os.path.getsize(samples_file) > 200:
                break
            await asyncio.sleep(0.1)
        else:
            raise Failed("the probe did not start measuring")
        await asyncio.sleep(1)  # its connections warmed up
        phases = []

        async def measure(name, work):
            log(f"abuse: {name} for {phase} s")
            start = time.monotonic()
            if work is None:
                await asyncio.sleep(phase)
                figures, failures = {}, []
            else:
                figures, failures = await work(start + phase)
            end = time.monotonic()
            phases.append({"name": name, "start": start, "end": min(end, start + phase + 2), "figures": figures,
                           "failures": failures})
            await asyncio.sleep(1)

        await measure("baseline", None)
        await measure("slowloris", lambda until: slowloris(base, until, args.slowloris, args.header_timeout))
        await measure("oversized headers", lambda until: oversized(base, until))
        await measure("connection flood", lambda until: flood(base, until, args.max_connections, args.flood_extra))
        await measure("stalled WebSocket", lambda until: stalled(base, until, stalled_user, sender_user))
        if args.fd_base:
            await measure("flood past the open-files limit (other instance)",
                          lambda until: fd_flood(args.fd_base, args.fd_pid, until, args.fd_limit, args.flood_extra))
        await measure("baseline after", None)
    finally:
        probe.terminate()
        try:
            probe.wait(10)
        except subprocess.TimeoutExpired:
            probe.kill()
            probe.wait()
    samples = read_samples(samples_file)
    baseline = _phase_stats(samples, phases[0]["start"], phases[0]["end"])
    failures = []
    result_phases = []
    for entry in phases:
        stats = _phase_stats(samples, entry["start"], entry["end"])
        verdicts = {}
        for kind in KINDS:
            before = baseline[kind]["p99_ms"] or 0
            bound = max(args.factor * before, args.floor_ms)
            during = stats[kind]["p99_ms"]
            ok = during is not None and during < bound and stats[kind]["errors"] == 0 and stats[kind]["count"] > 0
            verdicts[kind] = {"bound_ms": _round(bound), "pass": ok}
            if not ok and entry["name"] not in ("baseline",):
                failures.append(f"{entry['name']}: probe {kind} p99 {during} ms (bound {bound:.1f} ms), "
                                f"{stats[kind]['errors']} errors of {stats[kind]['count']}")
        failures += [f"{entry['name']}: {f}" for f in entry["failures"]]
        result_phases.append({"name": entry["name"], "seconds": _round(entry["end"] - entry["start"], 1),
                              "probe": stats, "verdicts": verdicts, "figures": entry["figures"]})
    figures = {"phases": result_phases, "factor": args.factor, "floor_ms": args.floor_ms,
               "header_timeout_s": args.header_timeout, "max_connections": args.max_connections,
               "ws_queue_bytes": args.ws_queue_bytes}
    if args.server_pid:
        figures["server_rss_kib"] = _rss_kib(args.server_pid)
    return figures, failures


def _renice(niceness):
    """Sets this process's niceness (lower is favoured); needs root for negative values, else a no-op."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, niceness)
    except OSError:
        pass


def _rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None
