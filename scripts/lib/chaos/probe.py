"""The well-behaved client of the abuse scenario, in a process of its own so that the abusers' work does not delay
its measurements: one keep-alive HTTP connection and one WebSocket, opened before any abuse, asking in turn
GET /healthz, a database route (GET /api/im/conversations) and a WebSocket `ping` request, ~30 times a second.
Each answer is one line `monotonic_time kind milliseconds ok` in the output file."""
import asyncio
import json
import signal
import time

from net import HTTPClient, open_ws

KINDS = ("healthz", "db", "ws_ping")


async def _ping(ws, counter):
    req_id = f"p{counter}"
    await ws.send(json.dumps({"type": "ping", "reqId": req_id}))
    while True:
        frame = json.loads(await ws.recv())
        if frame.get("reqId") == req_id:
            return frame.get("type") == "ack"


async def run(args):
    with open(args.session) as f:
        session = json.load(f)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    http = HTTPClient(args.base)
    ws = None
    counter = 0
    deadline = time.monotonic() + args.seconds
    with open(args.out, "w", buffering=1) as out:
        def record(kind, started, ok):
            out.write(f"{time.monotonic():.6f} {kind} {(time.monotonic() - started) * 1000:.3f} {int(ok)}\n")

        while not stop.is_set() and time.monotonic() < deadline:
            if ws is None:
                try:
                    ws, _ = await open_ws(args.base, session["imToken"], timeout=5)
                except Exception:  # noqa: BLE001  (counted as a failed ping; tried again next round)
                    record("ws_ping", time.monotonic(), False)
            started = time.monotonic()
            answer = await http.request("GET", "/healthz", timeout=5)
            record("healthz", started, answer.status == 200)
            started = time.monotonic()
            answer = await http.request("GET", "/api/im/conversations?limit=20", token=session["accessToken"],
                                        timeout=5)
            record("db", started, answer.status == 200)
            if ws is not None:
                counter += 1
                started = time.monotonic()
                try:
                    ok = await asyncio.wait_for(_ping(ws, counter), 5)
                except Exception:  # noqa: BLE001  (closed, timed out: an error for the report)
                    ok = False
                    ws = None
                record("ws_ping", started, ok)
            try:
                await asyncio.wait_for(stop.wait(), 0.03)
            except asyncio.TimeoutError:
                pass
    await http.close()
    if ws is not None:
        await ws.close()


def read_samples(path):
    samples = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 4:
                samples.append((float(parts[0]), parts[1], float(parts[2]), parts[3] == "1"))
    return samples
