"""Messaging clients that behave like real apps, and the exact accounting of what happened to every message.

Each `Client` is one user on one WebSocket. It sends 1:1 text messages to its peer with a fresh `clientMsgId` each,
keeps at most `window` requests in flight, and records every `ack` (server id and seq). When its connection breaks
(a killed instance, a database outage, a 4xxx close) it reconnects (its instance first, then the others), syncs from
the cursor it kept, and sends again every message that had no ack, with the same `clientMsgId`: that is what a real
client does, and the server must answer a repeat with the original message, never store it twice. An `error` answer
(e.g. 1504 while the database is away) puts the message back in the queue for a later retry.

`Fleet.verify` then compares the clients' records with the database (read with psql) and with what every recipient
got live, through the syncs after its reconnects, and through one full sync from the cursor it took first.
"""
import asyncio
import collections
import json
import subprocess
import time
import uuid

from websockets.exceptions import ConnectionClosed

from net import Failed, open_ws

RECONNECT_BACKOFF = (0.1, 0.2, 0.5, 1.0, 1.0)  # seconds between attempts (the last one repeats)
RETRY_AFTER_ERROR = 0.3  # seconds before a message answered with an error is sent again


class Client:
    def __init__(self, name, session, bases, preferred, rate, window):
        self.name, self.session = name, session
        self.user_id = session["user"]["id"]
        self.bases, self.preferred = bases, preferred
        self.rate, self.window = rate, window
        self.peer_id = None
        self.ws = None
        self.connected = asyncio.Event()
        self.changed = asyncio.Event()
        self.counter = 0
        self.initial_cursor = self.cursor = None
        # Sends.
        self.created = []  # clientMsgIds in creation order
        self.unacked = collections.deque()  # to (re)send
        self.pending = {}  # reqId -> clientMsgId, in flight on the current connection
        self.requests = {}  # reqId -> future, other requests (sync)
        self.acked = {}  # clientMsgId -> (msgId, seq, conversationId)
        self.acked_at = {}  # clientMsgId -> monotonic time of the (first) ack
        self.ack_conflicts = []  # a clientMsgId answered with two different messages
        self.errors = collections.Counter()  # error code -> count
        self.send_frames = self.resends = 0
        self.retry_at = 0.0
        # Receipts (messages from others).
        self.live = set()  # message ids received as events
        self.live_duplicates = 0  # the same message twice on one connection
        self.synced = set()  # message ids from the syncs after reconnecting
        self.sync_duplicates = 0  # the same message twice within one sync (all its pages)
        # Connections.
        self.connects = 0
        self.connect_failures = 0
        self.closes = collections.Counter()  # close code -> count
        self.close_events = []  # (monotonic time, close code, base)
        self.base = None  # the instance of the current connection
        self.bases_used = collections.Counter()
        self.stopping = False  # ends keep_connected for good (the end of the run)
        self.sending_stopped = False  # ends send_for after the send it is in (stop_sending)
        self.sending = False  # send_for is running
        self.reconnected_at = []  # (monotonic time of the break, time the connection was back)

    # --- connection ---------------------------------------------------------------------------------------------

    async def connect(self, deadline):
        """Connects (preferred instance first), starts the reader and syncs from the kept cursor. False when the
        deadline passed without a connection."""
        attempt = 0
        order = self.bases[self.preferred:] + self.bases[:self.preferred]
        while time.monotonic() < deadline:
            base = order[attempt % len(order)]
            try:
                self.ws, _hello = await open_ws(base, self.session["imToken"], timeout=5)
            except Exception:  # noqa: BLE001  (refused, 503 on the upgrade, timeout, reset: all mean "try again")
                self.connect_failures += 1
                await asyncio.sleep(RECONNECT_BACKOFF[min(attempt, len(RECONNECT_BACKOFF) - 1)])
                attempt += 1
                continue
            self.connects += 1
            self.base = base
            self.bases_used[base] += 1
            seen = set()
            asyncio.get_running_loop().create_task(self._read(self.ws, seen))
            if not await self._catch_up(seen):
                await self._drop("sync failed")
                attempt += 1
                continue
            self.connected.set()
            self._poke()
            return True
        return False

    async def _catch_up(self, seen):
        """The sync a client runs after (re)connecting: everything since its cursor, every page."""
        if self.cursor is None:
            answer = await self.request("sync", {})
            if answer is None:
                return False
            self.initial_cursor = self.cursor = answer["cursor"]
            return True
        ids, cursor = await self.sync_all(self.cursor, lambda ids: True)
        if ids is None:
            return False
        self.synced.update(ids)
        self.cursor = cursor
        return True

    async def sync_all(self, cursor, enough, settle=5.0):
        """Pages through sync from `cursor`. A page may stop short of transactions still running, so it asks again
        (for up to `settle` seconds) until `enough(ids so far)` holds. Returns (message ids from others, last cursor) or
        (None, None) when a request failed; counts a message seen twice as a sync duplicate."""
        ids = set()
        give_up = time.monotonic() + settle
        for _ in range(1000):
            page = await self.request("sync", {"cursor": cursor, "limit": 500})
            if page is None:
                return None, None
            for change in page["changes"]:
                message = change.get("message")
                if change["type"] == "message" and message and message["fromId"] != self.user_id:
                    if message["id"] in ids:
                        self.sync_duplicates += 1
                    ids.add(message["id"])
            cursor = page["cursor"]
            if not page["hasMore"]:
                if enough(ids) or time.monotonic() > give_up:
                    break
                await asyncio.sleep(0.1)
        return ids, cursor

    async def _read(self, ws, seen):
        code = None
        try:
            async for raw in ws:
                frame = json.loads(raw)
                kind, req_id = frame.get("type"), frame.get("reqId")
                if req_id is not None:
                    self._answer(kind, req_id, frame.get("data") or {})
                elif kind == "message":
                    message = frame["data"]
                    if message["fromId"] != self.user_id:
                        if message["id"] in seen:
                            self.live_duplicates += 1
                        seen.add(message["id"])
                        self.live.add(message["id"])
        except ConnectionClosed:
            pass
        except OSError:
            pass
        finally:
            code = ws.protocol.close_code if ws.protocol.close_code is not None else 1006
            if ws is self.ws:
                self.closes[code] += 1
                self.close_events.append((time.monotonic(), code, self.base))
                self._lost()

    def _answer(self, kind, req_id, data):
        if req_id in self.pending:
            cmid = self.pending.pop(req_id)
            if kind == "ack":
                answer = (data["id"], data["seq"], data["conversationId"])
                previous = self.acked.get(cmid)
                if previous is not None and previous[0] != answer[0]:
                    self.ack_conflicts.append((cmid, previous, answer))
                self.acked[cmid] = answer
                self.acked_at.setdefault(cmid, time.monotonic())
            else:
                self.errors[data.get("code")] += 1
                self.unacked.append(cmid)
                self.retry_at = time.monotonic() + RETRY_AFTER_ERROR
            self._poke()
        elif req_id in self.requests:
            future = self.requests.pop(req_id)
            if not future.done():
                future.set_result(data if kind == "ack" else None)

    def _lost(self):
        """The connection is gone: whatever was in flight goes back to the front of the queue."""
        self.ws = None
        self.connected.clear()
        in_flight = list(self.pending.values())
        self.pending.clear()
        self.unacked.extendleft(reversed(in_flight))
        for future in self.requests.values():
            if not future.done():
                future.set_result(None)
        self.requests.clear()
        self._poke()

    async def _drop(self, why):
        ws = self.ws
        if ws is not None:
            try:
                await asyncio.wait_for(ws.close(), 2)
            except (asyncio.TimeoutError, OSError, ConnectionClosed):
                pass
        self._lost()

    def _poke(self):
        self.changed.set()

    async def request(self, kind, data, timeout=10):
        """A non-send request on the current connection; its ack data, or None (error, lost connection)."""
        ws = self.ws
        if ws is None:
            return None
        self.counter += 1
        req_id = f"{self.name}-r{self.counter}"
        future = asyncio.get_running_loop().create_future()
        self.requests[req_id] = future
        try:
            await ws.send(json.dumps({"type": kind, "reqId": req_id, "data": data}))
            return await asyncio.wait_for(future, timeout)
        except (ConnectionClosed, OSError, asyncio.TimeoutError):
            self.requests.pop(req_id, None)
            return None

    async def keep_connected(self, deadline):
        """Reconnects whenever the connection is lost, until stopped."""
        while not self.stopping and time.monotonic() < deadline:
            if self.ws is None:
                broke = time.monotonic()
                if await self.connect(deadline):
                    if self.connects > 1:
                        self.reconnected_at.append((broke, time.monotonic()))
                continue
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), 0.5)
            except asyncio.TimeoutError:
                pass

    # --- sending ------------------------------------------------------------------------------------------------

    async def _send(self, cmid, resend):
        ws = self.ws
        self.counter += 1
        req_id = f"{self.name}-s{self.counter}"
        self.pending[req_id] = cmid
        frame = {"type": "send", "reqId": req_id,
                 "data": {"toId": self.peer_id, "chatType": "single", "msgType": "text",
                          "content": f"chaos {cmid}", "clientMsgId": cmid}}
        self.send_frames += 1
        self.resends += resend
        try:
            await ws.send(json.dumps(frame))
        except (ConnectionClosed, OSError):
            pass  # the reader sees the close and puts the message back in the queue

    async def send_for(self, until):
        """Sends new messages at `rate` per second until `until` (monotonic) or `stop_sending`, resending unacked ones
        first."""
        interval = 1.0 / self.rate
        next_at = time.monotonic()
        self.sending = True
        try:
            while True:
                now = time.monotonic()
                if now >= until or self.sending_stopped:
                    return
                if self.ws is None or not self.connected.is_set() or len(self.pending) >= self.window:
                    await self._wait_change(min(until - now, 0.5))
                    continue
                if self.unacked and now >= self.retry_at:
                    await self._send(self.unacked.popleft(), resend=1)
                    continue
                if now < next_at:
                    await self._wait_change(min(next_at, until) - now)
                    continue
                # Offline time is not made up for with a burst.
                next_at = max(next_at, now - 0.5) + interval
                cmid = f"{self.name}.{len(self.created)}.{uuid.uuid4().hex[:8]}"
                self.created.append(cmid)
                await self._send(cmid, resend=0)
        finally:
            self.sending = False

    def stop_sending(self):
        """Ends send_for after the send it is in (whose ack still comes: the reader keeps running). A flag, not a
        cancellation: Python 3.11's asyncio.wait_for swallows a cancellation that arrives as the event it waits for
        is set (an ack), and the sender then ran on through the final checks (gh-86296)."""
        self.sending_stopped = True
        self._poke()

    async def finish_sends(self, deadline):
        """After the run: resends until every created message has an ack or the deadline passes."""
        while time.monotonic() < deadline and len(self.acked) < len(self.created):
            now = time.monotonic()
            if self.ws is not None and self.connected.is_set() and self.unacked and now >= self.retry_at \
                    and len(self.pending) < self.window:
                await self._send(self.unacked.popleft(), resend=1)
                continue
            await self._wait_change(0.2)

    async def _wait_change(self, seconds):
        self.changed.clear()
        try:
            await asyncio.wait_for(self.changed.wait(), max(seconds, 0.001))
        except asyncio.TimeoutError:
            pass

    async def close(self):
        self.stopping = True
        ws = self.ws
        self.ws = None
        if ws is not None:
            try:
                await asyncio.wait_for(ws.close(), 2)
            except (asyncio.TimeoutError, OSError, ConnectionClosed):
                pass


class Fleet:
    """N users in a ring (user i sends to user i+1), spread over the instances."""

    def __init__(self, sessions, bases, rate, window):
        self.clients = [Client(f"c{i}", session, bases, i % len(bases), rate, window)
                        for i, session in enumerate(sessions)]
        for i, client in enumerate(self.clients):
            client.peer_id = self.clients[(i + 1) % len(self.clients)].user_id
        self.by_user = {client.user_id: client for client in self.clients}
        self.keepers = []
        self.final_started = None  # monotonic time final_sync took what each recipient must find

    async def start(self, deadline):
        """Connects every client (sync for the first cursor) and keeps them connected until `stop`."""
        results = await asyncio.gather(*(client.connect(deadline) for client in self.clients))
        if not all(results):
            raise Failed(f"{results.count(False)} clients could not connect")
        keep_until = deadline + 3600
        self.keepers = [asyncio.get_running_loop().create_task(client.keep_connected(keep_until))
                        for client in self.clients]

    async def send_for(self, seconds):
        """Every client sends for `seconds` or until stop_sending."""
        until = time.monotonic() + seconds
        await asyncio.gather(*(client.send_for(until) for client in self.clients))

    async def stop_sending(self, timeout):
        """Ends every client's send_for; Failed unless they all ended within `timeout` seconds (a sender running on
        would send after the final sync took what to expect)."""
        for client in self.clients:
            client.stop_sending()
        deadline = time.monotonic() + timeout
        while any(client.sending for client in self.clients):
            if time.monotonic() > deadline:
                raise Failed(f"{sum(c.sending for c in self.clients)} senders still running {timeout} s after the stop")
            await asyncio.sleep(0.01)

    async def finish(self, resend_seconds, drain_seconds):
        """Resends what has no ack, waits for deliveries, then runs every client's after-reconnect sync."""
        deadline = time.monotonic() + resend_seconds
        await asyncio.gather(*(client.finish_sends(deadline) for client in self.clients))
        # Deliveries: wait while they progress, at most drain_seconds without progress.
        expected = self.expected_by_recipient()
        last, quiet_since = -1, time.monotonic()
        for _ in range(int(drain_seconds * 10) * 10):
            got = sum(len(expected[c.user_id] & (c.live | c.synced)) for c in self.clients)
            if got == sum(len(e) for e in expected.values()):
                break
            if got != last:
                last, quiet_since = got, time.monotonic()
            elif time.monotonic() - quiet_since > drain_seconds:
                break
            await asyncio.sleep(0.1)
        # The sync a client runs after a reconnect (and at every app start): what live delivery missed.
        async def catch_up(client):
            want = expected[client.user_id]
            for _ in range(3):
                if client.ws is not None and client.connected.is_set():
                    ids, cursor = await client.sync_all(client.cursor,
                                                        lambda ids: want <= (client.live | client.synced | ids))
                    if ids is not None:
                        client.synced.update(ids)
                        client.cursor = cursor
                        return
                await asyncio.sleep(1)

        await asyncio.gather(*(catch_up(client) for client in self.clients))

    def live_share(self, start, end):
        """Of the messages acked between start and end (monotonic), how many reached their recipient live."""
        total = live = 0
        for client in self.clients:
            recipient = self.by_user[client.peer_id]
            for cmid, at in client.acked_at.items():
                if start <= at < end:
                    total += 1
                    live += client.acked[cmid][0] in recipient.live
        return live, total

    def expected_by_recipient(self):
        expected = collections.defaultdict(set)
        for client in self.clients:
            for msg_id, _seq, _conv in client.acked.values():
                expected[client.peer_id].add(msg_id)
        return expected

    async def final_sync(self, base):
        """Every recipient, on a fresh connection, syncs from the cursor it took before the first message: the
        complete record of what it may see. Returns {user id: Counter of message ids}."""
        result = {}
        expected = self.expected_by_recipient()
        self.final_started = time.monotonic()

        async def one(client):
            probe = Client(client.name + "-final", client.session, [base], 0, 1, 1)
            deadline = time.monotonic() + 30
            probe.cursor = client.initial_cursor
            probe.initial_cursor = client.initial_cursor
            probe.synced = set()
            # connect() would sync from the cursor on its own; this sync counts occurrences instead.
            while time.monotonic() < deadline:
                try:
                    probe.ws, _ = await open_ws(base, client.session["imToken"], timeout=5)
                    break
                except Exception:  # noqa: BLE001
                    await asyncio.sleep(0.5)
            else:
                raise Failed(f"final sync of {client.name}: no connection")
            asyncio.get_running_loop().create_task(probe._read(probe.ws, set()))
            counts = collections.Counter()
            cursor = client.initial_cursor
            want = expected[client.user_id]
            give_up = time.monotonic() + 10
            for _ in range(1000):
                page = await probe.request("sync", {"cursor": cursor, "limit": 500})
                if page is None:
                    raise Failed(f"final sync of {client.name} failed")
                for change in page["changes"]:
                    message = change.get("message")
                    if change["type"] == "message" and message and message["fromId"] != client.user_id:
                        counts[message["id"]] += 1
                cursor = page["cursor"]
                if not page["hasMore"]:
                    if want <= set(counts) or time.monotonic() > give_up:
                        break
                    # Rows of transactions still open are not returned yet; they show up on a later page.
                    await asyncio.sleep(0.2)
            await probe.close()
            result[client.user_id] = counts

        for start in range(0, len(self.clients), 10):
            await asyncio.gather(*(one(c) for c in self.clients[start:start + 10]))
        return result

    async def stop(self):
        for client in self.clients:
            client.stopping = True
        for task in self.keepers:
            task.cancel()
        await asyncio.gather(*(client.close() for client in self.clients))

    def verify(self, db_rows, final):
        """Compares the clients' records with the database rows (db_messages) and the final syncs. Returns the figures and the list of failed checks."""
        mine = set(self.by_user)
        rows = [row for row in db_rows if row[0] in mine]
        stored = collections.defaultdict(list)
        for from_id, cmid, msg_id, conversation, seq, content, _created in rows:
            stored[(from_id, cmid)].append((msg_id, seq, conversation))
        seqs = collections.defaultdict(list)
        for row in rows:
            seqs[row[3]].append(int(row[4]))
        contents = collections.Counter(row[5] for row in rows)

        created = acked = found = lost = mismatched = unacked_stored = 0
        delivered = delivered_live = final_found = 0
        lost_examples, undelivered_examples, final_missing_examples = [], [], []
        for client in self.clients:
            recipient = self.by_user[client.peer_id]
            got = recipient.live | recipient.synced
            final_counts = final.get(client.peer_id, collections.Counter())
            created += len(client.created)
            for cmid in client.created:
                rows_for = stored.get((client.user_id, cmid), [])
                if cmid not in client.acked:
                    unacked_stored += bool(rows_for)
                    continue
                acked += 1
                msg_id, seq, conversation = client.acked[cmid]
                if not rows_for:
                    lost += 1
                    lost_examples.append(cmid)
                    continue
                found += 1
                if (msg_id, seq, conversation) not in [(r[0], int(r[1]), r[2]) for r in rows_for]:
                    mismatched += 1
                if msg_id in got:
                    delivered += 1
                elif len(undelivered_examples) < 5:
                    undelivered_examples.append((client.name, cmid, msg_id))
                delivered_live += msg_id in recipient.live
                if final_counts[msg_id] >= 1:
                    final_found += 1
                elif len(final_missing_examples) < 5:
                    final_missing_examples.append((client.name, cmid, msg_id))

        db_duplicates = sum(len(v) - 1 for v in stored.values() if len(v) > 1) \
            + sum(n - 1 for n in contents.values() if n > 1)
        seq_duplicates = sum(len(v) - len(set(v)) for v in seqs.values())
        seq_gaps = sum(1 for v in seqs.values() if sorted(set(v)) != list(range(1, len(set(v)) + 1)))
        final_duplicates = sum(n - 1 for counts in final.values() for n in counts.values() if n > 1)
        acked_late = sum(1 for client in self.clients for at in client.acked_at.values()
                         if self.final_started is not None and at >= self.final_started)
        figures = {
            "clients": len(self.clients),
            "sent": created,
            "send_frames": sum(c.send_frames for c in self.clients),
            "resends": sum(c.resends for c in self.clients),
            "acked": acked,
            "unacked": created - acked,
            "unacked_stored": unacked_stored,
            "errors": dict(sum((c.errors for c in self.clients), collections.Counter())),
            "stored": len(rows),
            "acked_found": found,
            "acked_lost": lost,
            "ack_mismatch": mismatched,
            "ack_conflicts": sum(len(c.ack_conflicts) for c in self.clients),
            "db_duplicates": db_duplicates,
            "seq_duplicates": seq_duplicates,
            "conversations_with_seq_gaps": seq_gaps,
            "delivered": delivered,
            "delivered_live": delivered_live,
            "live_duplicates": sum(c.live_duplicates for c in self.clients),
            "sync_duplicates": sum(c.sync_duplicates for c in self.clients),
            "final_sync_found": final_found,
            "final_sync_duplicates": final_duplicates,
            "acked_after_final_sync_began": acked_late,
            "connects": sum(c.connects for c in self.clients),
            "connect_failures": sum(c.connect_failures for c in self.clients),
            "closes": {str(k): v for k, v in sum((c.closes for c in self.clients), collections.Counter()).items()},
        }
        failures = []
        if acked == 0:
            failures.append("no message was acknowledged")
        if lost:
            failures.append(f"{lost} acknowledged messages are not in the database (e.g. {lost_examples[:3]})")
        if mismatched or figures["ack_conflicts"]:
            failures.append(f"{mismatched} acks differ from the stored row, {figures['ack_conflicts']} clientMsgIds "
                            "were answered with two different messages")
        if db_duplicates or seq_duplicates:
            failures.append(f"duplicates in the database: {db_duplicates} by clientMsgId/content, "
                            f"{seq_duplicates} by seq")
        if seq_gaps:
            failures.append(f"{seq_gaps} conversations have gaps in their seqs")
        if delivered != found:
            failures.append(f"{found - delivered} stored acknowledged messages never reached their recipient "
                            f"(live or after reconnect + sync), e.g. {undelivered_examples}")
        if acked_late:
            failures.append(f"{acked_late} messages were acknowledged after the final sync took what to expect: a "
                            "client was still sending (the check, not the server, is wrong)")
        if final_found != found:
            failures.append(f"{found - final_found} acknowledged messages missing from the recipients' full sync, "
                            f"e.g. {final_missing_examples}")
        if figures["live_duplicates"] or figures["sync_duplicates"] or final_duplicates:
            failures.append(f"duplicates delivered: {figures['live_duplicates']} live, "
                            f"{figures['sync_duplicates']} in syncs, {final_duplicates} in the full syncs")
        return figures, failures


def explain_missing_syncs(failures, psql, database_url):
    """A sync returns only rows of transactions older than the oldest one still running (in any database of the
    cluster): when a full sync missed acknowledged messages, adds who holds a transaction open now, so that the
    failure says which one kept them back."""
    if not any("full sync" in failure for failure in failures):
        return failures
    query = ("SELECT pid, datname, application_name, state, backend_xid, backend_xmin, "
             "round(extract(epoch FROM now() - xact_start)::numeric, 1), left(query, 100) FROM pg_stat_activity "
             "WHERE (backend_xid IS NOT NULL OR backend_xmin IS NOT NULL) AND pid <> pg_backend_pid()")
    try:
        done = subprocess.run([psql, "-X", "-q", "-At", "-F", " | ", "-d", database_url, "-c", query],
                              capture_output=True, text=True, timeout=30)
        output = done.stdout.strip() if done.returncode == 0 else f"(psql failed: {done.stderr.strip()})"
    except (OSError, subprocess.SubprocessError) as error:
        output = f"(pg_stat_activity unreadable: {error})"
    return failures + [f"transactions open after the final sync: {output or '(none)'}"]


def db_messages(psql, database_url):
    """Every stored message: [(from_id, client_msg_id, id, conversation_id, seq, content, created_at epoch)]."""
    query = ("SELECT from_id, client_msg_id, id, conversation_id, seq, coalesce(content, ''), "
             "extract(epoch FROM created_at) FROM messages "
             "WHERE msg_type = 'text'")
    output = subprocess.run([psql, "-X", "-q", "-At", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-d", database_url,
                             "-c", query], check=True, capture_output=True, text=True, timeout=120).stdout
    return [tuple(line.split("\t")) for line in output.splitlines() if line]


async def register_users(bases, app_key, prefix, count, concurrency=8):
    """Registers `count` users, spread over the instances, a few at a time (password hashing is slow)."""
    from net import register

    semaphore = asyncio.Semaphore(concurrency)

    async def one(i):
        async with semaphore:
            return await register(bases[i % len(bases)], app_key, f"{prefix}{i}")

    return await asyncio.gather(*(one(i) for i in range(count)))
