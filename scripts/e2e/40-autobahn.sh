#!/usr/bin/env bash
# Autobahn WebSocket conformance: cases 1-10 (12 and 13 need permessage-deflate, which Parley does not offer)
# against the dev-only echo route /ws/echo, run by kosoku (Autobahn's case files under Python 3, from PyPI).
# Fails on any case not OK, NON-STRICT or INFORMATIONAL (for the behaviour or the closing handshake) and
# prints one summary line. kosoku is installed once into a cached virtualenv:
#   PARLEY_KOSOKU_VENV   (default .parley/venv)      PARLEY_KOSOKU_VERSION (default 0.1.0)
#   PARLEY_AUTOBAHN_REPORT  copy the HTML/JSON report here (default: discarded with the temp dir)
set -euo pipefail
# shellcheck source=scripts/lib/e2e.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

venv=${PARLEY_KOSOKU_VENV:-$PARLEY_ROOT/.parley/venv}
version=${PARLEY_KOSOKU_VERSION:-0.1.0}
installed=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("kosoku"))' 2>/dev/null || true)
if [[ ! -x $venv/bin/kosoku || $installed != "$version" ]]; then
    ensure_apt_packages python3-venv
    log "installing kosoku $version into $venv"
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "kosoku==$version" \
        || fail "pip install kosoku==$version failed"
fi

parley_start "$(e2e_fresh_db)"

report="$E2E_TMP/autobahn"
kosoku_status=0
(cd "$E2E_TMP" && "$venv/bin/kosoku" -m fuzzingclient -x '12.*' -x '13.*' -p 2 -o "$report" \
    "ws://127.0.0.1:$PARLEY_PORT/ws/echo") >"$E2E_TMP/kosoku.log" 2>&1 || kosoku_status=$?
E2E_LOGS+=("$E2E_TMP/kosoku.log")
[[ -f $report/index.json ]] || fail "kosoku wrote no report (exit $kosoku_status)"
if [[ -n ${PARLEY_AUTOBAHN_REPORT:-} ]]; then
    mkdir -p "$PARLEY_AUTOBAHN_REPORT"
    cp -R "$report/." "$PARLEY_AUTOBAHN_REPORT/"
fi

# index.json: {agent: {case id: {"behavior": ..., "behaviorClose": ..., ...}}}. Prints the summary line, then
# one line per bad case; exit status 1 when there is any.
summary_status=0
summary=$(python3 - "$report/index.json" <<'PY'
import collections, json, sys
good = {"OK", "NON-STRICT", "INFORMATIONAL"}
results = [case | {"id": cid} for agent in json.load(open(sys.argv[1])).values() for cid, case in agent.items()]
counts = collections.Counter(case["behavior"] for case in results)
bad = [case for case in results if case["behavior"] not in good or case.get("behaviorClose", "OK") not in good]
key = lambda c: [int(part) for part in c["id"].split(".")]
print(f"{len(results)} cases: " + ", ".join(f"{n} {label}" for label, n in sorted(counts.items())))
for case in sorted(bad, key=key):
    print(f"  {case['id']}: {case['behavior']} / close {case.get('behaviorClose')}")
sys.exit(1 if bad or not results else 0)
PY
) || summary_status=$?

parley_stop_clean 15
if ((summary_status != 0 || kosoku_status != 0)); then
    fail "Autobahn: $summary (kosoku exit $kosoku_status)"
fi
pass "Autobahn (kosoku $version, cases 1-10 on /ws/echo): $summary"
