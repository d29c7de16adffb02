"""The markdown block scripts/chaos prints for BENCHMARKS.md, from the scenarios' JSON results."""
import json
import os


def _fmt(value):
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _verdict(result):
    return "**FAIL**" if result["failures"] else "PASS"


def _problems(logs_dir, scenario):
    try:
        with open(os.path.join(logs_dir, f"{scenario}.logs")) as f:
            return f.read().strip().split("=", 1)[1]
    except (OSError, IndexError, TypeError):
        return "n/a"


def _messages_rows(f):
    errors = ", ".join(f"{code}: {n}" for code, n in sorted(f.get("errors", {}).items(), key=str)) or "none"
    closes = ", ".join(f"{code}: {n}" for code, n in sorted(f.get("closes", {}).items())) or "none"
    return [
        ("messages sent (distinct clientMsgIds) / send frames (with resends)",
         f"{_fmt(f['sent'])} / {_fmt(f['send_frames'])} ({_fmt(f['resends'])} resends)"),
        ("error answers to sends (code: count; each retried later)", errors),
        ("acknowledged / without an ack at the end (of those, stored anyway)",
         f"{_fmt(f['acked'])} / {_fmt(f['unacked'])} ({_fmt(f['unacked_stored'])})"),
        ("acknowledged and found in the database / lost", f"**{_fmt(f['acked_found'])} / {_fmt(f['acked_lost'])}**"),
        ("acks naming another row than the stored one; clientMsgIds acked with two different messages",
         f"{_fmt(f['ack_mismatch'])}; {_fmt(f['ack_conflicts'])}"),
        ("duplicates in the database (same clientMsgId or content; same seq); conversations with seq gaps",
         f"{_fmt(f['db_duplicates'])}; {_fmt(f['seq_duplicates'])}; {_fmt(f['conversations_with_seq_gaps'])}"),
        ("acknowledged messages that reached their recipient (live, or by the sync after reconnecting) / of those live",
         f"{_fmt(f['delivered'])} / {_fmt(f['delivered_live'])}"),
        ("in each recipient's full sync from its first cursor: found / duplicates",
         f"{_fmt(f['final_sync_found'])} / {_fmt(f['final_sync_duplicates'])}"),
        ("duplicates delivered live / within one sync", f"{_fmt(f['live_duplicates'])} / {_fmt(f['sync_duplicates'])}"),
        ("WebSocket connections (failed attempts); close codes seen",
         f"{_fmt(f['connects'])} ({_fmt(f['connect_failures'])}); {closes}"),
    ]


def _table(rows):
    lines = ["| figure | value |", "|---|---:|"]
    lines += [f"| {name} | {value} |" for name, value in rows]
    return lines


def _failures(result):
    return [f"- failed: {failure}" for failure in result["failures"]]


def kill9(result, logs_dir):
    f = result["figures"]
    out = [f"#### kill9: SIGKILL to one of the instances while {f.get('clients', '?')} clients send — {_verdict(result)}",
           ""]
    if "sent" not in f:
        return out + _failures(result)
    out.append(f"- {f['clients']} WebSocket clients in a ring (each sends 1:1 text to the next), spread over the "
               f"instances (two, or three with `--nats`) on one database, {_fmt(f['rate_per_client'])} messages/s each, window 4, for "
               f"{_fmt(f['duration_s'])} s; SIGKILL to the first instance after {_fmt(f['acked_before_kill'])} acks, at "
               f"a moment with sends in flight. Its {f['victim_clients']} clients reconnect to a survivor, "
               "sync from their cursor and resend what had no ack with the same clientMsgId; then every client syncs "
               f"once more, and a full sync from each one's first cursor is compared with the database. Survivor's "
               f"log: {_problems(logs_dir, 'kill9')} error lines.")
    out.append("")
    rows = [
        ("sends in flight on the killed instance at the kill / of those stored by the original send (ack lost, "
         "resend answered with the original)", f"{_fmt(f['in_flight_at_kill'])} / {_fmt(f['in_flight_stored_by_original'])}"),
        ("its clients reconnected to the survivor; time from the kill p50 / max",
         f"{_fmt(f['victims_reconnected'])} of {_fmt(f['victim_clients'])}; {_fmt(f['reconnect_after_kill_p50_ms'])} / "
         f"{_fmt(f['reconnect_after_kill_max_ms'])} ms"),
    ]
    return out + _table(_messages_rows(f) + rows) + _failures(result)


def pgrestart(result, logs_dir):
    f = result["figures"]
    out = [f"#### pgrestart: PostgreSQL stopped and started under load — {_verdict(result)}", ""]
    if "sent" not in f:
        return out + _failures(result)
    out.append(f"- Two instances (three with `--nats`); {f['clients']} WebSocket clients (ring, 10 messages/s each) and 4 REST clients "
               "(a `POST /api/im/messages` and a `GET /api/im/conversations` in turn, ~10/s each, failed sends retried "
               "with the same clientMsgId); `GET /readyz` on each instance every 50 ms and a new WebSocket "
               "(`ws-upgrade`) every 250 ms. PostgreSQL is stopped "
               f"(`pg_ctl -m fast`, then in the second cycle `-m immediate`, a crash), left down {_fmt(f['outage_s'])} s "
               "and started. Recovery = from `pg_ctl start` returning (PostgreSQL accepts connections) to the first "
               "`/readyz` 200; the cluster feed = until the instance's LISTEN connection is back (it then closes its "
               f"WebSockets with 4003 so that they sync). Server logs: {_problems(logs_dir, 'pgrestart')} error lines.")
    out.append("")
    out.append("| cycle | PostgreSQL down at / up at (s) | `/readyz` 200 after it was up (per instance) | first REST "
               "send stored after | cluster feed back after (per instance) |")
    out.append("|---|---:|---:|---:|---:|")
    for c in f["cycles"]:
        ready = " / ".join(f"{_fmt(v)} ms" for v in c["ready_after_ms"].values())
        feed = " / ".join(f"{_fmt(v)} ms" for v in c["feed_restored_after_ms"].values())
        out.append(f"| {c['mode']} | {c['down_s']} / {c['up_s']} | {ready} | {_fmt(c['first_rest_send_after_ms'])} ms "
                   f"| {feed} |")
    out.append("")
    statuses = ", ".join(f"{k}: {_fmt(v)}" for k, v in sorted(f["http_statuses"].items()))
    rows = [
        ("HTTP answers over the run (route status/code: count)", statuses),
        ("answers other than 101/2xx or a 503 envelope (1503/1504)", _fmt(sum(f["http_unexpected"].values()))),
        ("slowest answer (the pool's acquire timeout is 2 s)", f"{_fmt(f['slowest_answer_ms'])} ms"),
        ("REST sends: sent / acknowledged / acknowledged and found in the database (under the answered id)",
         f"{_fmt(f['rest_sent'])} / {_fmt(f['rest_acked'])} / **{_fmt(f['rest_acked_found'])}**"),
        ("WebSocket messages acked after the feed was back that arrived live", f["live_after_recovery"]),
    ]
    return out + _table(rows + _messages_rows(f)) + _failures(result)


def abuse(result, logs_dir):
    f = result["figures"]
    out = [f"#### abuse: a well-behaved client's latency before and during abuse — {_verdict(result)}", ""]
    if "phases" not in f:
        return out + _failures(result)
    out.append("- One instance (PARLEY_HEADER_TIMEOUT_SECONDS=" f"{_fmt(f['header_timeout_s'])}, PARLEY_MAX_CONNECTIONS="
               f"{_fmt(f['max_connections'])}, PARLEY_WS_MAX_QUEUED_BYTES={_fmt(f.get('ws_queue_bytes'))}). The probe (its own process, nice -5) "
               "holds one keep-alive HTTP connection and one WebSocket opened before any abuse and asks in turn "
               "`GET /healthz`, `GET /api/im/conversations` (a database route) and a WebSocket `ping` request, ~30 "
               "rounds/s; the abusers run in another process (nice 5). Latency is the probe's round trip; "
               f"pass: no probe error and p99 during < max({_fmt(f['factor'])} x baseline p99, {_fmt(f['floor_ms'])} ms) "
               f"for each kind, and the server's documented answer to the abuse. Server log: "
               f"{_problems(logs_dir, 'abuse')} error lines; VmRSS at the end {_fmt(f.get('server_rss_kib'))} KiB.")
    out.append("")
    out.append("| phase | `/healthz` p50 / p99 (ms) | DB route p50 / p99 (ms) | WS ping p50 / p99 (ms) | probe "
               "requests (errors) | what the server did | |")
    out.append("|---|---:|---:|---:|---:|---|---|")
    for phase in f["phases"]:
        probe = phase["probe"]
        cells = [f"{_fmt(probe[k]['p50_ms'])} / {_fmt(probe[k]['p99_ms'])}" for k in ("healthz", "db", "ws_ping")]
        count = sum(probe[k]["count"] for k in probe)
        errors = sum(probe[k]["errors"] for k in probe)
        name = phase["name"]
        ok = all(v["pass"] for v in phase["verdicts"].values())
        phase_failures = [x for x in result["failures"] if x.startswith(name + ":")]
        verdict = "baseline" if name.startswith("baseline") else ("PASS" if ok and not phase_failures else "**FAIL**")
        out.append(f"| {name} | {' | '.join(cells)} | {_fmt(count)} ({errors}) | {_describe(name, phase['figures'], f)} "
                   f"| {verdict} |")
    return out + _failures(result)


def _describe(name, figures, f):
    if name == "slowloris":
        return (f"{_fmt(figures.get('connections'))} connections sending a head 1 byte / 0.5 s, replaced when closed: "
                f"{_fmt(figures.get('status_408', 0))} answered 408 and closed after {_fmt(figures.get('closed_after_p50_s'))} s "
                f"(p50), {_fmt(figures.get('closed_after_max_s'))} s (max); {_fmt(figures.get('over_limit', 0))} outlived "
                "the timeout + 2 s")
    if name == "oversized headers":
        return (f"4 clients, 32 KiB header field, new connection each: "
                f"{', '.join(f'{k[7:]}: {_fmt(v)}' for k, v in figures.items() if k.startswith('status_'))}")
    if name == "connection flood":
        initial = figures.get("initial", {})
        return (f"{_fmt(f['max_connections'])} + extra opened at once: {_fmt(initial.get('held'))} held, "
                f"{_fmt(initial.get('status_503'))} answered 503 and closed; then one more every 50 ms "
                f"({_fmt(figures.get('status_503', 0) - initial.get('status_503', 0))} more 503s)")
    if name.startswith("flood past the open-files limit"):
        initial = figures.get("initial", {})
        return (f"another instance, 256 open files, default PARLEY_MAX_CONNECTIONS: its limit lowered to "
                f"{_fmt(figures.get('allowed'))}; {_fmt(initial.get('held'))} held, {_fmt(initial.get('status_503'))} "
                f"answered 503; its CPU while held {_fmt(figures.get('server_cpu_pct'))}% (the probe's instance is "
                "not flooded here)")
    if name == "stalled WebSocket":
        return (f"a WebSocket that never reads, sent 90 KB messages ~40/s: closed with 4000 "
                f"{_fmt(figures.get('closed_4000'))} times (it reconnected and stalled again), "
                f"{_fmt(figures.get('send_status_201', 0))} sends stored")
    return ""


def soak(result, logs_dir):
    f = result["figures"]
    out = [f"#### soak: {_fmt(f.get('seconds'))} s of mixed load, resident memory every 10 s — {_verdict(result)}", ""]
    if "memory" not in f:
        return out + _failures(result)
    files = f["files"]
    rest = ", ".join(f"{k}: {_fmt(v)}" for k, v in sorted(f["rest"].items()))
    out.append(f"- Two instances; 20 WebSocket clients in a ring, 2 messages/s each, one of them reconnecting every 5 s "
               f"({_fmt(f['ws_reconnects'])} reconnects); 2 REST clients, ~8 requests/s each ({rest}); one upload per "
               f"second, alternately new (300 KiB-1 MiB) and one of 20 small files again (8-64 KiB), downloaded back "
               f"through its signed URL ({_fmt(files.get('upload_201', 0))} "
               f"uploads, {_fmt(files.get('uploaded_bytes', 0))} bytes; {_fmt(files.get('download_200', 0))} downloads, "
               f"{_fmt(files.get('download_mismatch', 0))} mismatches). Server logs: {_problems(logs_dir, 'soak')} "
               "error lines.")
    out.append("- Memory rule (scripts/lib/chaos/soak.py): after a 60 s warm-up, the least-squares slope of VmRSS over the "
               "second half of the samples < 1 MiB/min, and the last minute's mean at most max(2 MiB, 3%) above the "
               "first minute's after the warm-up.")
    out.append("")
    out.append("| instance | VmRSS start / after warm-up / end / max (KiB) | slope, second half | last minute vs first "
               "after warm-up | |")
    out.append("|---|---:|---:|---:|---|")
    for name, m in f["memory"].items():
        out.append(f"| {name.replace('_', ' ')} | {_fmt(m['start_kib'])} / {_fmt(m['after_warmup_kib'])} / "
                   f"{_fmt(m['end_kib'])} / {_fmt(m['max_kib'])} | {_fmt(m['slope_second_half_kib_per_min'])} KiB/min | "
                   f"{m['growth_kib']:+,} KiB (allowed {_fmt(m['growth_allowed_kib'])}) | "
                   f"{'PASS' if m['pass'] else '**FAIL**'} |")
    out.append("")
    for name, m in f["memory"].items():
        series = " ".join(f"{v / 1024:.1f}" for v in m["samples_kib"])
        out.append(f"- {name.replace('_', ' ')}, VmRSS every 10 s (MiB): {series}")
    out.append("")
    rows = [r for r in _messages_rows(f) if not r[0].startswith("WebSocket connections")]
    return out + _table(rows) + _failures(result)


def natsrestart(result, logs_dir):
    f = result["figures"]
    out = [f"#### natsrestart: the relay's nats-server stopped and started under load — {_verdict(result)}", ""]
    if "sent" not in f:
        return out + _failures(result)
    out.append(f"- {f['instances']} instances relaying through one nats-server (`PARLEY_RELAY=nats://...`); "
               f"{f['clients']} WebSocket clients in a ring spread over them (each sends to the next, on another "
               f"instance). nats-server is stopped (SIGTERM), left down {_fmt(f['outage_s'])} s and started again. "
               "Sends commit in PostgreSQL whatever the relay does; once NATS is back each instance closes its "
               "WebSockets with 4003 so that they sync what the outage kept from them. Server logs: "
               f"{_problems(logs_dir, 'natsrestart')} error lines.")
    out.append("")
    resync = " / ".join(f"{_fmt(v)} ms" for v in f["resync_after_restart_ms"].values())
    rows = [
        ("sends acknowledged while NATS was down", _fmt(f["acked_during_outage"])),
        ("each instance's 4003 resync after NATS was back", resync),
        ("messages acknowledged from a second after the last resync that arrived live", f["live_after_recovery"]),
    ]
    return out + _table(_messages_rows(f) + rows) + _failures(result)


def report(paths, logs_dir):
    render = {"kill9": kill9, "pgrestart": pgrestart, "natsrestart": natsrestart, "abuse": abuse, "soak": soak}
    for path in paths:
        with open(path) as f:
            result = json.load(f)
        print()
        try:
            lines = render[result["scenario"]](result, logs_dir)
        except (KeyError, TypeError, ValueError) as error:
            lines = [f"#### {result['scenario']}: (report failed: {error!r})"] + _failures(result)
        print("\n".join(lines))
        if result["figures"].get("elapsed_s") is not None:
            print(f"\n({result['scenario']} took {result['figures']['elapsed_s']} s)")
