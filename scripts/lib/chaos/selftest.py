"""Checks of the clients themselves, on fake sockets (no server): `python -m chaos selftest`, which scripts/chaos runs
before its scenarios. A wrong harness reads as a server losing messages, so its own rules are checked first."""
import asyncio
import collections
import time

from fleet import Fleet

from net import Failed


class FakeSocket:
    """Takes every frame; the check answers them itself (Client._answer)."""

    def __init__(self):
        self.frames = 0

    async def send(self, _text):
        self.frames += 1


def _fleet(count, window):
    sessions = [{"user": {"id": f"u{i}"}, "imToken": ""} for i in range(count)]
    fleet = Fleet(sessions, ["http://127.0.0.1:9"], rate=1000, window=window)
    for client in fleet.clients:
        client.ws = FakeSocket()
        client.connected.set()
    return fleet


def _ack(client, number):
    client._answer("ack", next(iter(client.pending)), {"id": str(number), "seq": number, "conversationId": "c"})


async def _wait_for(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise Failed(f"selftest: {what}")
        await asyncio.sleep(0.001)


async def senders_end_when_stopped_as_an_ack_wakes_them():
    """pgrestart stops its senders mid-run. One woken by an ack in the same turn as the stop used to run on (Python
    3.11's wait_for swallowed the cancellation) and sent after the final sync took what to expect."""
    fleet = _fleet(3, window=1)
    sending = asyncio.ensure_future(fleet.send_for(60))
    await _wait_for(lambda: all(client.pending for client in fleet.clients), 5, "the senders did not start")
    for number, client in enumerate(fleet.clients):
        _ack(client, number)
    await fleet.stop_sending(timeout=5)
    created = [len(client.created) for client in fleet.clients]
    # Whatever was in flight is answered later, as a server would; nothing new may follow.
    for number, client in enumerate(fleet.clients):
        while client.pending:
            _ack(client, 100 + number)
    await asyncio.sleep(0.05)
    if not sending.done():
        raise Failed("selftest: Fleet.send_for still running after stop_sending")
    if [len(client.created) for client in fleet.clients] != created:
        raise Failed(f"selftest: messages created after stop_sending ({created} -> "
                     f"{[len(client.created) for client in fleet.clients]})")


async def an_ack_after_the_final_sync_began_fails_the_run():
    """The final sync takes what each recipient must find when it starts; an ack after that is the harness's fault
    and must say so rather than pass or blame the server."""
    fleet = _fleet(2, window=1)
    sender, recipient = fleet.clients
    sender.created.append("m1")
    sender.acked["m1"] = ("1", 1, "c")
    fleet.final_started = time.monotonic()
    sender.acked_at["m1"] = fleet.final_started + 1
    recipient.live.add("1")
    row = (sender.user_id, "m1", "1", "c", "1", "chaos m1", "0")
    _figures, failures = fleet.verify([row], {recipient.user_id: collections.Counter({"1": 1})})
    if not any("acknowledged after the final sync" in failure for failure in failures):
        raise Failed(f"selftest: a late ack was not reported: {failures}")


async def run():
    for check in (senders_end_when_stopped_as_an_ack_wakes_them, an_ack_after_the_final_sync_began_fails_the_run):
        await asyncio.wait_for(check(), 30)
