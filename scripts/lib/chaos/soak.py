"""soak: minutes of mixed load on two instances while their resident memory is sampled every 10 s.

Load (moderate, steady): 20 WebSocket clients in a ring sending 2 messages/s each (so 40 stored and delivered
per second, half across instances); every 5 s one of them drops its connection and reconnects + syncs; two REST
clients each doing ~8 requests/s (send, conversation list, history page, sync); one client uploading a file every
second with PUT /api/files, alternately a new one of 300 KiB-1 MiB and one of 20 small ones (8-64 KiB) again, and
downloading it through its signed URL (SHA-256 compared). At the end every message is accounted for as in kill9.

Memory verdict, per instance, on VmRSS samples every 10 s after a 60 s warm-up (caches, pools, allocator arenas
filling): the least-squares slope over the second half of the samples must be under 1 MiB/min, and the mean of the
last minute must not exceed the mean of the first minute after the warm-up by more than max(2 MiB, 3%). A leak of
1 KiB per message (2.3 MiB/min at this load) fails both; a steady server's allocator noise (about +-1 MiB) passes.
Slower leaks than ~1 MiB/min are beyond what a few minutes can tell from that noise.
"""
import asyncio
import collections
import hashlib
import os
import random
import time
import uuid

from faults import RestSender
from fleet import Fleet, db_messages, explain_missing_syncs, register_users
from net import HTTPClient

SAMPLE_EVERY = 10.0
WARMUP = 60.0
SLOPE_LIMIT_KIB_PER_MIN = 1024.0
GROWTH_LIMIT_KIB = 2048.0
GROWTH_LIMIT_SHARE = 0.03


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def slope_per_minute(points):
    """Least-squares slope of [(seconds, KiB)] in KiB per minute."""
    n = len(points)
    if n < 2:
        return 0.0
    mean_t = sum(t for t, _ in points) / n
    mean_v = sum(v for _, v in points) / n
    var = sum((t - mean_t) ** 2 for t, _ in points)
    if var == 0:
        return 0.0
    return sum((t - mean_t) * (v - mean_v) for t, v in points) / var * 60


def verdict(samples):
    """samples: [(seconds since the load began, KiB)]. Returns the trend figures and whether they pass."""
    after = [(t, v) for t, v in samples if t >= WARMUP]
    second_half = after[len(after) // 2:]
    first_minute = [v for t, v in after if t < WARMUP + 60]
    end = samples[-1][0] if samples else 0
    last_minute = [v for t, v in after if t > end - 60]
    slope = slope_per_minute(second_half)
    first_mean = sum(first_minute) / len(first_minute) if first_minute else 0
    last_mean = sum(last_minute) / len(last_minute) if last_minute else 0
    growth = last_mean - first_mean
    allowed = max(GROWTH_LIMIT_KIB, GROWTH_LIMIT_SHARE * first_mean)
    figures = {
        "samples_kib": [v for _, v in samples],
        "start_kib": samples[0][1] if samples else None,
        "after_warmup_kib": after[0][1] if after else None,
        "end_kib": samples[-1][1] if samples else None,
        "max_kib": max(v for _, v in samples) if samples else None,
        "slope_second_half_kib_per_min": round(slope, 1),
        "first_minute_mean_kib": round(first_mean),
        "last_minute_mean_kib": round(last_mean),
        "growth_kib": round(growth),
        "growth_allowed_kib": round(allowed),
    }
    ok = len(second_half) >= 3 and slope < SLOPE_LIMIT_KIB_PER_MIN and growth <= allowed
    return figures, ok


class Uploader:
    def __init__(self, base, session):
        self.http = HTTPClient(base)
        self.download = HTTPClient(base)
        self.session = session
        self.stats = collections.Counter()
        self.random = random.Random(8)
        # The server keeps blobs up to 256 KiB in a cache bounded at 64 MiB (SmallBlobCache): unique small files
        # would fill it for 17 minutes at this rate, growth a few minutes cannot tell from a leak. Small files are
        # therefore re-sent from a pool of 20 (stored once per app: one blob each), large ones are always new.
        self.small = [os.urandom(self.random.randint(8 * 1024, 64 * 1024)) for _ in range(20)]

    async def run(self, until):
        while time.monotonic() < until:
            started = time.monotonic()
            if self.stats["attempts"] % 2 == 0:
                body = os.urandom(self.random.randint(300 * 1024, 1024 * 1024))  # unique, large
            else:
                body = self.small[self.random.randrange(len(self.small))]  # re-sent small content
            self.stats["attempts"] += 1
            size = len(body)
            answer = await self.http.request("PUT", "/api/files", body, token=self.session["accessToken"],
                                             headers={"Content-Type": "application/octet-stream",
                                                      "X-File-Name": f"soak-{uuid.uuid4().hex[:6]}.bin"},
                                             timeout=30)
            self.stats[f"upload_{answer.status}"] += 1
            if answer.status == 201:
                self.stats["uploaded_bytes"] += size
                path = "/" + answer.data["url"].split("://", 1)[1].split("/", 1)[1]
                got = await self.download.request("GET", path, timeout=30)
                self.stats[f"download_{got.status}"] += 1
                if got.status == 200:
                    self.stats["downloaded_bytes"] += len(got.body)
                    if hashlib.sha256(got.body).digest() != hashlib.sha256(body).digest():
                        self.stats["download_mismatch"] += 1
            await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - started)))
        await self.http.close()
        await self.download.close()


class Reader(RestSender):
    """A REST client: a send, then the conversation list, a history page and a sync, in turn."""

    def __init__(self, *args):
        super().__init__(*args)
        self.cursor = None
        self.conversation = None

    async def run(self, until, interval):
        n = 0
        while time.monotonic() < until:
            started = time.monotonic()
            token = self.session["accessToken"]
            step = n % 4
            if step == 0:
                cmid = f"{self.name}.{len(self.created)}.{uuid.uuid4().hex[:8]}"
                self.created.append(cmid)
                await self._send(cmid)
                if self.acked:
                    self.conversation = next(iter(self.acked.values()))[2]
            elif step == 1:
                answer = await self.http.request("GET", "/api/im/conversations?limit=20", token=token)
                self.answers.append((time.monotonic(), "list", answer.status, answer.code, answer.seconds))
            elif step == 2 and self.conversation:
                answer = await self.http.request("GET", f"/api/im/conversations/{self.conversation}/messages?limit=20",
                                                 token=token)
                self.answers.append((time.monotonic(), "history", answer.status, answer.code, answer.seconds))
            else:
                path = "/api/im/sync" + (f"?cursor={self.cursor}" if self.cursor else "")
                answer = await self.http.request("GET", path, token=token)
                self.answers.append((time.monotonic(), "sync", answer.status, answer.code, answer.seconds))
                if answer.status == 200:
                    self.cursor = answer.data["cursor"]
            n += 1
            await asyncio.sleep(max(0.0, interval - (time.monotonic() - started)))


async def run(args):
    bases = args.bases.split(",")
    pids = [int(p) for p in args.pids.split(",")]
    log = args.log
    log(f"soak: {args.seconds:.0f} s on {len(bases)} instances")
    sessions = await register_users(bases, args.app_key, "sk", 20)
    others = await register_users(bases, args.app_key, "skr", 4)
    fleet = Fleet(sessions, bases, rate=2, window=2)
    await fleet.start(time.monotonic() + 60)
    readers = [Reader(f"r{i}", bases[i % len(bases)], others[i], others[2]["user"]["id"]) for i in range(2)]
    uploader = Uploader(bases[0], others[3])

    started = time.monotonic()
    until = started + args.seconds
    samples = {pid: [] for pid in pids}

    async def sample():
        next_at = started
        while True:
            for pid in pids:
                samples[pid].append((round(time.monotonic() - started, 1), rss_kib(pid)))
            next_at += SAMPLE_EVERY
            if next_at > until + 0.5:
                return
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))

    async def churn():
        n = 0
        while time.monotonic() < until - 5:
            await asyncio.sleep(5)
            client = fleet.clients[n % len(fleet.clients)]
            n += 1
            if client.ws is not None:
                await client._drop("churn")

    await asyncio.gather(sample(), churn(), fleet.send_for(args.seconds),
                         *(r.run(until, 1 / 8) for r in readers), uploader.run(until))
    log("soak: load stopped; accounting for every message")
    await fleet.finish(resend_seconds=20, drain_seconds=3)
    await asyncio.gather(*(r.finish(time.monotonic() + 20) for r in readers))
    final = await fleet.final_sync(bases[0])
    rows = db_messages(args.psql, args.database_url)
    figures, failures = fleet.verify(rows, final)
    failures = explain_missing_syncs(failures, args.psql, args.database_url)
    await fleet.stop()

    statuses = collections.Counter(f"{route} {status}" for r in readers for (_t, route, status, _c, _s) in r.answers)
    bad = {k: v for k, v in statuses.items() if not k.endswith(" 200") and not k.endswith(" 201")}
    memory = {}
    for index, pid in enumerate(pids):
        trend, ok = verdict(samples[pid])
        trend["pass"] = ok
        memory[f"instance_{index + 1}"] = trend
        if not ok:
            failures.append(f"instance {index + 1} memory grows: slope {trend['slope_second_half_kib_per_min']} "
                            f"KiB/min over the second half, last minute {trend['growth_kib']} KiB above the first "
                            f"after the warm-up (allowed {trend['growth_allowed_kib']})")
    figures.update({
        "seconds": args.seconds,
        "memory": memory,
        "rest": dict(statuses),
        "files": dict(uploader.stats),
        "ws_reconnects": figures["connects"] - len(fleet.clients),
    })
    if bad:
        failures.append(f"REST answers other than 200/201: {bad}")
    if uploader.stats["download_mismatch"] or any(k.startswith(("upload_", "download_")) and not k.endswith(("_201", "_200"))
                                                  for k in uploader.stats):
        failures.append(f"uploads/downloads failed: {dict(uploader.stats)}")
    return figures, failures
