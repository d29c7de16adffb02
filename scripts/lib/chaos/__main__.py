"""The clients of scripts/chaos: `python -m chaos SCENARIO [options]` (with scripts/lib on sys.path).

Each scenario writes its figures and failed checks as JSON to --out and exits 1 when a check failed; `report`
turns the JSON files into the markdown block for BENCHMARKS.md. Progress goes to stderr. Every wait is bounded.
"""
import argparse
import asyncio
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def log(message):
    print(f"[chaos {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def main():
    parser = argparse.ArgumentParser(prog="chaos")
    sub = parser.add_subparsers(dest="scenario", required=True)

    def scenario(name, **defaults):
        p = sub.add_parser(name)
        p.add_argument("--out", required=True)
        p.add_argument("--bases", required=True, help="comma-separated http://127.0.0.1:PORT of the instances")
        p.add_argument("--app-key", default=os.environ.get("CHAOS_APP_KEY"))
        p.add_argument("--psql", default="psql")
        p.add_argument("--database-url", default=os.environ.get("DATABASE_URL"))
        p.add_argument("--timeout", type=float, default=600, help="the whole scenario, seconds")
        return p

    p = scenario("natsrestart")
    p.add_argument("--natsctl", required=True)
    p.add_argument("--nats-dir", required=True)
    p.add_argument("--clients", type=int, default=30)
    p.add_argument("--rate", type=float, default=10)
    p.add_argument("--window", type=int, default=4)
    p.add_argument("--warmup", type=float, default=3)
    p.add_argument("--outage", type=float, default=3)
    p.add_argument("--settle", type=float, default=6)
    p.add_argument("--feed-limit", type=float, default=5,
                   help="an instance must resync its clients within this many seconds of NATS being back")

    p = scenario("kill9")
    p.add_argument("--kill-pid", type=int, required=True)
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--rate", type=float, default=10, help="messages/s per client")
    p.add_argument("--window", type=int, default=4)
    p.add_argument("--duration", type=float, default=12)
    p.add_argument("--kill-at", type=float, default=5)

    p = scenario("pgrestart")
    p.add_argument("--pgctl", required=True)
    p.add_argument("--pg-dir", required=True)
    p.add_argument("--modes", default="fast,immediate")
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--rest-clients", type=int, default=4)
    p.add_argument("--rate", type=float, default=10)
    p.add_argument("--rest-rate", type=float, default=10, help="requests/s per REST client (a send + a list)")
    p.add_argument("--window", type=int, default=4)
    p.add_argument("--warmup", type=float, default=3)
    p.add_argument("--outage", type=float, default=5)
    p.add_argument("--settle", type=float, default=5)
    p.add_argument("--recovery-limit", type=float, default=20)
    p.add_argument("--hang-limit", type=float, default=7, help="no answer may take longer (seconds)")
    p.add_argument("--relay", choices=["postgres", "nats"], default="postgres",
                   help="the instances' relay: only LISTEN/NOTIFY loses its feed with PostgreSQL (then a 4003 resync)")
    p.add_argument("--feed-limit", type=float, default=3,
                   help="seconds after PostgreSQL is back within which the cluster feed (LISTEN) must be too")

    p = scenario("abuse")
    p.add_argument("--phase", type=float, default=10, help="seconds per phase")
    p.add_argument("--slowloris", type=int, default=500, help="slowloris connections")
    p.add_argument("--flood-extra", type=int, default=500, help="connections opened past the limit")
    p.add_argument("--max-connections", type=int, required=True, help="the server's PARLEY_MAX_CONNECTIONS")
    p.add_argument("--header-timeout", type=float, required=True, help="PARLEY_HEADER_TIMEOUT_SECONDS")
    p.add_argument("--factor", type=float, default=5, help="p99 during may be this many times the baseline's")
    p.add_argument("--floor-ms", type=float, default=50, help="... or up to this, whichever is more")
    p.add_argument("--ws-queue-bytes", type=int, help="the server's PARLEY_WS_MAX_QUEUED_BYTES (for the report)")
    p.add_argument("--server-pid", type=int)
    p.add_argument("--fd-base", help="an instance started with few descriptors and the default connection limit")
    p.add_argument("--fd-pid", type=int)
    p.add_argument("--fd-limit", type=int, help="its open-files limit")

    p = scenario("soak")
    p.add_argument("--pids", required=True, help="comma-separated pids of the instances (VmRSS)")
    p.add_argument("--seconds", type=float, default=300)

    p = sub.add_parser("probe")
    p.add_argument("--base", required=True)
    p.add_argument("--session", required=True)
    p.add_argument("--samples", required=True)
    p.add_argument("--seconds", type=float, required=True)

    p = sub.add_parser("report")
    p.add_argument("results", nargs="+")
    p.add_argument("--logs-dir")

    sub.add_parser("selftest", help="check the clients' own rules on fake sockets (no server)")

    args = parser.parse_args()
    args.log = log
    if args.scenario == "report":
        import report

        report.report(args.results, args.logs_dir)
        return
    if args.scenario == "selftest":
        import selftest
        from net import Failed

        try:
            asyncio.run(selftest.run())
        except Failed as failure:
            log(str(failure))
            sys.exit(1)
        log("selftest: PASS")
        return
    if args.scenario == "probe":
        import probe

        args.out = args.samples
        asyncio.run(probe.run(args))
        return
    if not args.app_key:
        parser.error("--app-key or CHAOS_APP_KEY is required")

    import abuse
    import faults
    import soak
    from net import Failed

    run = {"kill9": faults.kill9, "pgrestart": faults.pgrestart, "natsrestart": faults.natsrestart, "abuse": abuse.run,
           "soak": soak.run}[args.scenario]
    started = time.monotonic()

    async def bounded():
        return await asyncio.wait_for(run(args), args.timeout)

    try:
        figures, failures = asyncio.run(bounded())
    except asyncio.TimeoutError:
        figures, failures = {}, [f"the scenario did not finish within {args.timeout:.0f} s"]
    except Failed as failure:
        figures, failures = {}, [str(failure)]
    figures["elapsed_s"] = round(time.monotonic() - started, 1)
    with open(args.out, "w") as out:
        json.dump({"scenario": args.scenario, "figures": figures, "failures": failures}, out, indent=1)
    for failure in failures:
        log(f"{args.scenario} FAILED: {failure}")
    log(f"{args.scenario}: {'FAIL' if failures else 'PASS'} " + json.dumps(
        {k: v for k, v in figures.items() if not isinstance(v, (dict, list))}))
    sys.exit(1 if failures else 0)


main()
