"""kill9 and pgrestart: faults under load, and the accounting of every acknowledged message afterwards."""
import asyncio
import collections
import os
import signal
import time
import uuid

from fleet import Fleet, db_messages, explain_missing_syncs, register_users
from websockets.exceptions import InvalidStatus

from net import Answer, Failed, HTTPClient, open_ws, percentile


def _ms(seconds):
    return None if seconds is None else round(seconds * 1000, 1)


async def kill9(args):
    """N clients spread over two instances send; one instance gets SIGKILL mid-run. Its clients reconnect to the
    survivor, sync and resend what had no ack; then everything is checked against the database."""
    bases = args.bases.split(",")
    survivor = bases[1]
    log = args.log
    log(f"kill9: registering {args.clients} users")
    sessions = await register_users(bases, args.app_key, "k9u", args.clients)
    fleet = Fleet(sessions, bases, args.rate, args.window)
    await fleet.start(time.monotonic() + 60)
    victims = [c for c in fleet.clients if c.bases[c.preferred] == bases[0]]
    log(f"kill9: {len(fleet.clients)} clients connected ({len(victims)} on the instance to kill); sending "
        f"{args.rate}/s each for {args.duration} s, SIGKILL at {args.kill_at} s")

    at_kill = {}

    async def killer():
        await asyncio.sleep(args.kill_at)
        # The interesting moment is one with sends in flight: committed or not, their acks are lost.
        wait_until = time.monotonic() + 2
        while sum(len(c.pending) for c in victims) < 2 and time.monotonic() < wait_until:
            await asyncio.sleep(0.001)
        at_kill["in_flight"] = [cmid for c in victims for cmid in c.pending.values()]
        at_kill["acked_before"] = sum(len(c.acked) for c in fleet.clients)
        at_kill["time"] = time.monotonic()
        at_kill["wall"] = time.time()
        os.kill(args.kill_pid, signal.SIGKILL)
        log(f"kill9: SIGKILL sent to pid {args.kill_pid} ({len(at_kill['in_flight'])} sends in flight on it)")

    await asyncio.gather(fleet.send_for(args.duration), killer())
    log("kill9: sending stopped; resending what has no ack, draining, syncing")
    await fleet.finish(resend_seconds=20, drain_seconds=3)
    final = await fleet.final_sync(survivor)
    rows = db_messages(args.psql, args.database_url)
    figures, failures = fleet.verify(rows, final)
    failures = explain_missing_syncs(failures, args.psql, args.database_url)
    await fleet.stop()

    # In flight at the kill and stored by that original send (the row is older than the kill): their acks were lost,
    # and the resend must have been answered with that same message (the checks above: no mismatch, no duplicate).
    created = {(row[0], row[1]): float(row[6]) for row in rows}
    in_flight = at_kill.get("in_flight", [])
    owner = {cmid: c.user_id for c in victims for cmid in c.created}
    committed_unacked = sum(1 for cmid in in_flight if created.get((owner[cmid], cmid), 1e18) < at_kill["wall"])
    back = [broke_back[1] - at_kill["time"] for c in victims for broke_back in c.reconnected_at[:1]]
    figures.update({
        "victim_clients": len(victims),
        "victims_reconnected": len(back),
        "reconnect_after_kill_p50_ms": _ms(percentile(back, 50)),
        "reconnect_after_kill_max_ms": _ms(max(back) if back else None),
        "in_flight_at_kill": len(in_flight),
        "in_flight_stored_by_original": committed_unacked,
        "acked_before_kill": at_kill.get("acked_before"),
        "duration_s": args.duration,
        "rate_per_client": args.rate,
    })
    if "time" not in at_kill:
        failures.append("the instance was not killed")
    if len(back) != len(victims):
        failures.append(f"only {len(back)} of {len(victims)} clients of the killed instance reconnected")
    return figures, failures


class RestSender:
    """A REST client that sends 1:1 messages (POST /api/im/messages) and reads its conversation list, recording
    every answer; a send that got no 2xx is retried later with the same clientMsgId."""

    def __init__(self, name, base, session, peer_id):
        self.name, self.base, self.session, self.peer_id = name, base, session, peer_id
        self.http = HTTPClient(base)
        self.created, self.acked, self.unacked = [], {}, collections.deque()
        self.answers = []  # (monotonic time, route, status, code, seconds)
        self.stopping = False  # set to end `run` after its current request (a cancelled request loses its answer)

    async def _send(self, cmid):
        answer = await self.http.request("POST", "/api/im/messages",
                                         {"toId": self.peer_id, "chatType": "single", "msgType": "text",
                                          "content": f"chaos {cmid}", "clientMsgId": cmid},
                                         token=self.session["accessToken"])
        self.answers.append((time.monotonic(), "send", answer.status, answer.code, answer.seconds))
        if answer.status in (200, 201):
            self.acked[cmid] = (answer.data["id"], answer.data["seq"], answer.data["conversationId"])
        else:
            self.unacked.append(cmid)

    async def run(self, until, interval):
        while time.monotonic() < until and not self.stopping:
            started = time.monotonic()
            if self.unacked:
                await self._send(self.unacked.popleft())
            else:
                cmid = f"{self.name}.{len(self.created)}.{uuid.uuid4().hex[:8]}"
                self.created.append(cmid)
                await self._send(cmid)
            answer = await self.http.request("GET", "/api/im/conversations?limit=20",
                                             token=self.session["accessToken"])
            self.answers.append((time.monotonic(), "list", answer.status, answer.code, answer.seconds))
            await asyncio.sleep(max(0.0, interval - (time.monotonic() - started)))

    async def finish(self, deadline):
        while self.unacked and time.monotonic() < deadline:
            await self._send(self.unacked.popleft())
            if self.unacked:
                await asyncio.sleep(0.2)
        await self.http.close()


async def _readiness(base, until, samples):
    http = HTTPClient(base)
    while time.monotonic() < until:
        answer = await http.request("GET", "/readyz", timeout=10)
        samples.append((time.monotonic(), answer.status, answer.code, answer.seconds))
        await asyncio.sleep(0.05)
    await http.close()


async def _upgrades(base, session, until, samples):
    """A new WebSocket every 250 ms: 101 (then closed) or a 503 envelope, never a 500 or a hang."""
    while time.monotonic() < until:
        started = time.monotonic()
        try:
            ws, _ = await open_ws(base, session["imToken"], timeout=10)
            status, code = 101, None
            await ws.close()
        except InvalidStatus as refused:
            status = refused.response.status_code
            code = Answer(status, refused.response.body or b"").code
        except Exception:  # noqa: BLE001  (no answer: reset, timeout)
            status, code = 0, None
        samples.append((time.monotonic(), status, code, time.monotonic() - started))
        await asyncio.sleep(0.25)


async def _pgctl(args, action):
    process = await asyncio.create_subprocess_exec(args.pgctl, action, args.pg_dir,
                                                   stdout=asyncio.subprocess.DEVNULL,
                                                   stderr=asyncio.subprocess.PIPE)
    _, err = await asyncio.wait_for(process.communicate(), 120)
    if process.returncode != 0:
        raise Failed(f"pgctl {action}: {err.decode(errors='replace')[-500:]}")


async def pgrestart(args):
    """PostgreSQL stopped (fast, then immediate) and started again while WebSocket clients and REST clients send.
    Meanwhile Parley must answer 503 in the envelope (never 500, never hang past the pool's acquire timeout), be
    ready again by itself, and lose no acknowledged message."""
    bases = args.bases.split(",")
    log = args.log
    modes = args.modes.split(",")
    log(f"pgrestart: registering {args.clients} WebSocket users and {args.rest_clients} REST users")
    sessions = await register_users(bases, args.app_key, "pgw", args.clients)
    rest_sessions = await register_users(bases, args.app_key, "pgr", args.rest_clients + 1)
    sink = rest_sessions.pop()
    fleet = Fleet(sessions, bases, args.rate, args.window)
    await fleet.start(time.monotonic() + 60)
    rest_senders = [RestSender(f"r{i}", bases[i % len(bases)], s, sink["user"]["id"])
                    for i, s in enumerate(rest_sessions)]
    total = args.warmup + len(modes) * (args.outage + args.settle)
    until = time.monotonic() + total + 120  # the orchestration below ends the load earlier
    readiness = {base: [] for base in bases}
    stop_load = asyncio.Event()

    async def load():
        load_until = time.monotonic() + 3600
        sending = asyncio.ensure_future(fleet.send_for(3600))
        rest_tasks = [asyncio.ensure_future(r.run(load_until, 1.0 / args.rest_rate)) for r in rest_senders]
        await stop_load.wait()
        # Stopped by flags, not cancelled: every sender must have ended before `finish` counts what to expect.
        for sender in rest_senders:
            sender.stopping = True
        await fleet.stop_sending(timeout=15)
        await asyncio.wait(rest_tasks, timeout=15)
        await asyncio.gather(sending, *rest_tasks, return_exceptions=True)

    upgrades = {base: [] for base in bases}
    probes = [asyncio.ensure_future(_readiness(base, until, readiness[base])) for base in bases]
    probes += [asyncio.ensure_future(_upgrades(base, sink, until, upgrades[base])) for base in bases]
    load_task = asyncio.ensure_future(load())
    cycles = []
    await asyncio.sleep(args.warmup)
    for mode in modes:
        cycle = {"mode": mode}
        started = time.monotonic()
        await _pgctl(args, "stop" if mode == "fast" else "kill")
        cycle["down_s"] = time.monotonic()
        log(f"pgrestart: PostgreSQL stopped ({mode}, {time.monotonic() - started:.1f} s); out for {args.outage} s")
        await asyncio.sleep(args.outage)
        # The feed can come back as soon as PostgreSQL accepts connections, which may be before `pg_ctl start`
        # returns: its 4003s count from when the start was issued.
        cycle["start_s"] = starting = time.monotonic()
        await _pgctl(args, "start")
        cycle["up_s"] = up = time.monotonic()
        ready = {}
        while time.monotonic() < up + args.recovery_limit and len(ready) < len(bases):
            for base in bases:
                if base not in ready:
                    after = [s for s in readiness[base] if s[0] - s[3] >= up and s[1] == 200]
                    if after:
                        ready[base] = after[0][0] - up
            await asyncio.sleep(0.05)
        cycle["ready_after_ms"] = {base: _ms(ready.get(base)) for base in bases}
        log(f"pgrestart: PostgreSQL up again; /readyz 200 after "
            f"{', '.join(str(v) + ' ms' for v in cycle['ready_after_ms'].values())}")
        # The next outage waits until every instance's cluster feed is back (its clients closed with 4003), bounded:
        # on a loaded machine the listener can come back after a fixed settle time, and an outage that began before
        # would be blamed on this cycle. A NATS relay never lost its feed: no 4003 comes, nothing to wait for.
        while args.relay == "postgres" and time.monotonic() < up + args.recovery_limit and not all(
                any(b == base and code == 4003 and t >= starting for c in fleet.clients
                    for t, code, b in c.close_events)
                for base in bases):
            await asyncio.sleep(0.05)
        await asyncio.sleep(args.settle)
        sends_after = [a[0] - up for r in rest_senders for a in r.answers
                       if a[1] == "send" and a[0] - a[4] >= up and a[2] in (200, 201)]
        cycle["first_rest_send_after_ms"] = _ms(min(sends_after) if sends_after else None)
        cycles.append(cycle)
    # The cluster feed (LISTEN) comes back after the pool: each instance then closes its clients with 4003 and
    # they sync. From then on every message must arrive live again.
    last_up = cycles[-1]["start_s"]
    feed_deadline = time.monotonic() + args.recovery_limit
    while time.monotonic() < feed_deadline and not all(
            c.connected.is_set() and (args.relay == "nats"
                                      or any(t >= last_up and code == 4003 for t, code, _ in c.close_events))
            for c in fleet.clients):
        await asyncio.sleep(0.05)
    live_start = time.monotonic() + 0.2
    await asyncio.sleep(args.settle)
    live_window = (live_start, time.monotonic())
    stop_load.set()
    await load_task
    for probe in probes:
        probe.cancel()
    await asyncio.gather(*probes, return_exceptions=True)

    log("pgrestart: load stopped; resending what has no ack, draining, syncing")
    await asyncio.gather(fleet.finish(resend_seconds=30, drain_seconds=3),
                         *(r.finish(time.monotonic() + 30) for r in rest_senders))
    final = await fleet.final_sync(bases[0])
    rows = db_messages(args.psql, args.database_url)
    figures, failures = fleet.verify(rows, final)
    failures = explain_missing_syncs(failures, args.psql, args.database_url)
    live, total = fleet.live_share(*live_window)
    await fleet.stop()

    # REST sends: every acknowledged one stored once, under the answered id.
    stored = collections.defaultdict(list)
    for from_id, cmid, msg_id, *_rest in rows:
        stored[(from_id, cmid)].append(msg_id)
    rest_acked = rest_found = rest_unacked_stored = 0
    for sender in rest_senders:
        uid = sender.session["user"]["id"]
        for cmid in sender.created:
            ids = stored.get((uid, cmid), [])
            if cmid in sender.acked:
                rest_acked += 1
                rest_found += ids == [sender.acked[cmid][0]]
            else:
                rest_unacked_stored += bool(ids)
    rest_created = sum(len(s.created) for s in rest_senders)

    # What the HTTP clients saw, per route and status, and how long the slowest answer took.
    statuses = collections.Counter()
    bad = collections.Counter()
    slowest = 0.0
    answers = [(route, status, code, seconds) for r in rest_senders for (_t, route, status, code, seconds) in r.answers]
    answers += [("readyz", status, code, seconds) for base in bases for (_t, status, code, seconds) in readiness[base]]
    answers += [("ws-upgrade", status, code, seconds) for base in bases
                for (_t, status, code, seconds) in upgrades[base]]
    for route, status, code, seconds in answers:
        statuses[f"{route} {status}" + (f"/{code}" if status == 503 else "")] += 1
        slowest = max(slowest, seconds)
        ok = status in (101, 200, 201) or (status == 503 and code in (1503, 1504))
        if not ok:
            bad[f"{route} {status}/{code}"] += 1
    recovery = [v for c in cycles for v in c["ready_after_ms"].values()]
    for index, cycle in enumerate(cycles):
        end = cycles[index + 1]["down_s"] if index + 1 < len(cycles) else float("inf")
        feed = {}
        for base in bases:
            times = [t for c in fleet.clients for t, code, b in c.close_events
                     if b == base and code == 4003 and cycle["start_s"] <= t < end]
            feed[base] = _ms(max(0.0, min(times) - cycle["up_s"])) if times else None
        cycle["feed_restored_after_ms"] = feed
    t0 = cycles[0]["down_s"]
    for cycle in cycles:  # seconds since the first outage began
        cycle["down_s"], cycle["up_s"] = round(cycle["down_s"] - t0, 2), round(cycle["up_s"] - t0, 2)
        cycle["start_s"] = round(cycle["start_s"] - t0, 2)
    figures.update({
        "cycles": cycles,
        "outage_s": args.outage,
        "http_statuses": dict(statuses),
        "http_unexpected": dict(bad),
        "slowest_answer_ms": _ms(slowest),
        "rest_sent": rest_created,
        "rest_acked": rest_acked,
        "rest_acked_found": rest_found,
        "rest_unacked_stored": rest_unacked_stored,
        "recovery_max_ms": max((v for v in recovery if v is not None), default=None),
        "feed_restored_max_ms": max((v for c in cycles for v in c["feed_restored_after_ms"].values()
                                     if v is not None), default=None),
        "live_after_recovery": f"{live}/{total}",
    })
    if bad:
        failures.append(f"answers other than 101/2xx or a 503 envelope (1503/1504): {dict(bad)}")
    if slowest > args.hang_limit:
        failures.append(f"an answer took {slowest:.1f} s (limit {args.hang_limit} s: the pool's acquire timeout "
                        "plus a margin)")
    if any(v is None for v in recovery):
        failures.append(f"/readyz not 200 within {args.recovery_limit} s of PostgreSQL's restart: {cycles}")
    if not any(k.endswith("/1504") or k.endswith("/1503") for k in statuses):
        failures.append("no 503 was seen during the outages (did the outage happen?)")
    if live != total or total == 0:
        failures.append(f"after the cluster feed was back, {total - live} of {total} messages did not arrive live")
    feeds = [v for c in cycles for v in c["feed_restored_after_ms"].values()]
    if args.relay == "nats":
        # The relay does not go through PostgreSQL: nothing of it was lost, and no instance needs a resync.
        figures["feed_restored_max_ms"] = "n/a (NATS relay)"
    elif any(v is None for v in feeds):
        failures.append(f"an instance's cluster feed did not come back (no 4003 resync): {cycles}")
    elif max(feeds) > args.feed_limit * 1000:
        failures.append(f"the cluster feed came back {max(feeds):.0f} ms after PostgreSQL (limit {args.feed_limit} s)")
    if rest_found != rest_acked:
        failures.append(f"{rest_acked - rest_found} REST-acknowledged messages missing or stored differently")
    return figures, failures


async def natsrestart(args):
    """The NATS relay's broker stopped and started again while WebSocket clients on the instances send to each
    other (user i to user i+1, on the next instance). Sends must still be acknowledged during the outage (they
    commit in PostgreSQL); once NATS is back each instance tells its clients to resync (4003) within the limit;
    after that every message arrives live; no acknowledged message is lost or doubled."""
    bases = args.bases.split(",")
    log = args.log
    log(f"natsrestart: registering {args.clients} users over {len(bases)} instances")
    sessions = await register_users(bases, args.app_key, "nrw", args.clients)
    fleet = Fleet(sessions, bases, args.rate, args.window)
    await fleet.start(time.monotonic() + 60)
    moments = {}

    async def natsctl(action):
        process = await asyncio.create_subprocess_exec(
            args.natsctl, action, args.nats_dir, stdin=asyncio.subprocess.DEVNULL)
        if await asyncio.wait_for(process.wait(), 30) != 0:
            raise Failed(f"natsctl {action} failed")

    async def outage():
        await asyncio.sleep(args.warmup)
        moments["down"] = time.monotonic()
        await natsctl("stop")
        log(f"natsrestart: NATS stopped for {args.outage} s")
        await asyncio.sleep(args.outage)
        # An instance may reconnect (and resync) before `natsctl start` has seen the port open and returned.
        moments["starting"] = time.monotonic()
        await natsctl("start")
        moments["up"] = time.monotonic()
        log("natsrestart: NATS started again")

    await asyncio.gather(fleet.send_for(args.warmup + args.outage + args.settle), outage())
    moments["end"] = time.monotonic()
    log("natsrestart: sending stopped; resending what has no ack, draining, syncing")
    await fleet.finish(resend_seconds=20, drain_seconds=3)
    final = await fleet.final_sync(bases[0])
    rows = db_messages(args.psql, args.database_url)
    figures, failures = fleet.verify(rows, final)
    failures = explain_missing_syncs(failures, args.psql, args.database_url)

    feed = {}
    for base in bases:
        times = [t for c in fleet.clients for t, code, b in c.close_events
                 if b == base and code == 4003 and t >= moments["starting"]]
        feed[base] = _ms(max(0.0, min(times) - moments["up"])) if times else None
    restored = [v for v in feed.values() if v is not None]
    # From a second after the last instance's resync: the relay is back, every message must arrive live.
    live_from = moments["up"] + (max(restored) / 1000 if restored else 0) + 1
    live, total = fleet.live_share(live_from, moments["end"])
    acked_during = sum(1 for c in fleet.clients for at in c.acked_at.values()
                       if moments["down"] <= at < moments["up"])
    await fleet.stop()
    figures.update({
        "instances": len(bases),
        "outage_s": args.outage,
        "acked_during_outage": acked_during,
        "resync_after_restart_ms": feed,
        "resync_after_restart_max_ms": max(restored) if restored else None,
        "live_after_recovery": f"{live}/{total}",
    })
    if acked_during == 0:
        failures.append("no send was acknowledged while NATS was down (sends must not depend on the relay)")
    if len(restored) != len(bases):
        failures.append(f"an instance did not resync its clients after NATS came back: {feed}")
    elif max(restored) > args.feed_limit * 1000:
        failures.append(f"an instance resynced {max(restored):.0f} ms after NATS was back (limit {args.feed_limit} s)")
    if live != total or total == 0:
        failures.append(f"after the relay was back, {total - live} of {total} messages did not arrive live")
    return figures, failures
