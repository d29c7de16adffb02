# shellcheck shell=bash
# The common core of the benchmark scripts (scripts/bench, bench-auth, bench-files, bench-messaging,
# bench-realtime, bench-updates, bench-cluster, bench-search). Source it after scripts/lib/common.sh; do not execute
# it.
#
# Lifecycle
#   bench_setup NAME              TMP: a fresh directory /tmp/parley-NAME.XXXXXX, PG_DIR=$TMP/pg, RESULTS (below).
#                                 On exit the tracked processes are stopped (newest first), the cluster in PG_DIR
#                                 is stopped and TMP removed (BENCH_KEEP=1 keeps it).
#   bench_track PID SIGNAL        stop PID with SIGNAL on exit (TERM for parley, QUIT for nginx)
#   bench_track_cluster DIR       stop the PostgreSQL cluster in DIR on exit too (a second one, beside PG_DIR)
#   bench_untrack PID             not any more (it ended and was waited for)
#   bench_stop_pid PID SIGNAL     signal, wait up to 15 s, then SIGKILL (and no longer tracked)
#   bench_binaries VAR=PRODUCT... the release binaries: when every VAR is set, those are benchmarked (no build);
#                                 otherwise `swift build -c release` (its output on stderr: stdout carries only the
#                                 results block) and each VAR is set to the build's PRODUCT
#   bench_seconds VALUE           wrk-style durations (10s, 2m, 1h, 7) in whole seconds; dies on anything else
#   bench_load_check              BENCH_LOAD_START: the load average now, with a warning when other work runs
#
# Load generators
#   bench_wrk OUT ARGS...         wrk ARGS (add --latency) with its output in OUT; dies showing OUT when wrk fails
#   bench_wrk_figures OUT         "rps p99_ms errors requests non2xx bytes_per_s" of a wrk --latency output: p99 from
#                                 wrk's latency distribution, errors = non-2xx/3xx answers + socket errors
#                                 (timeouts included); fails when the output holds no figures
#   bench_pgbench DIR ARGS...     pgbench ARGS with its per-transaction log in DIR (-l); prints "tps p99_ms failed":
#                                 p99 is the nearest rank over every transaction, failed = failed transactions
#
# Results: RESULTS holds one line per measured run,
#   test <TAB> contender <TAB> round <TAB> per_second <TAB> p99_ms <TAB> errors <TAB> bytes_per_s
#   bench_record TEST CONTENDER ROUND PER_SECOND P99_MS ERRORS [BYTES_PER_S]
#   bench_mean TEST CONTENDER COLUMN   over the rounds: mean of 4 (whole) or 7 (whole), mean of 5 (2 decimals),
#                                      sum of 6; "nan" without rows; TEST "*" takes any test
#   bench_ratio A B                    A / B with 2 decimals ("n/a" when B is 0)
#   bench_round_table LEADS RATE ROW   the per-round markdown table: LEADS the titles of the leading columns
#                                      ("Test|Contender"), RATE the title of column 4; ROW TEST CONTENDER prints the
#                                      leading cells ("a | b")
#   bench_commit                       short HEAD, + " + uncommitted changes" when the tree differs from it
#   bench_cpu                          the CPU model
#   bench_wait_search_queue DB SECS    until the search indexer has taken every message queued in database DB of the
#                                      cluster on PG_PORT (looked at every 250 ms, a new session each time: one session
#                                      looping in a DO block would hold its snapshot, and with it the horizon that lets
#                                      the indexer's scans skip the queue rows it deleted); dies after SECS seconds
#   bench_cpu_ticks PID                "server_ticks database_ticks": CPU time (utime + stime, clock ticks) so far of
#                                      process PID and of the cluster in PG_DIR (the postmaster, its children, and
#                                      the children it reaped: a backend that ended stays counted)

if [[ -n ${_PARLEY_BENCH_SOURCED:-} ]]; then
    return 0
fi
_PARLEY_BENCH_SOURCED=1

_BENCH_TRACKED=()
_BENCH_CLUSTERS=()

bench_untrack() {
    local entry kept=()
    for entry in "${_BENCH_TRACKED[@]}"; do [[ ${entry%%:*} == "$1" ]] || kept+=("$entry"); done
    _BENCH_TRACKED=("${kept[@]}")
}

bench_stop_pid() {
    local pid=$1 sig=$2 i
    # Forgotten first: once stopped, its number may come back as another process.
    bench_untrack "$pid"
    kill -"$sig" "$pid" 2>/dev/null || return 0
    for ((i = 0; i < 150; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

bench_track() {
    _BENCH_TRACKED+=("$1:$2")
}

bench_track_cluster() {
    _BENCH_CLUSTERS+=("$1")
}

# shellcheck disable=SC2317  # a trap handler
_bench_cleanup() {
    local status=$? i entry dir tracked=("${_BENCH_TRACKED[@]}")
    for ((i = ${#tracked[@]} - 1; i >= 0; i--)); do
        entry=${tracked[i]}
        bench_stop_pid "${entry%%:*}" "${entry#*:}"
    done
    for dir in ${PG_DIR:-} "${_BENCH_CLUSTERS[@]}"; do
        pg_cluster_stop "$dir" 2>/dev/null || pg_cluster_kill "$dir" 2>/dev/null || true
    done
    if [[ -n ${TMP:-} ]]; then
        if [[ ${BENCH_KEEP:-0} == 1 ]]; then log "kept $TMP"; else rm -rf "$TMP"; fi
    fi
    exit "$status"
}

bench_setup() {
    TMP=$(mktemp -d "/tmp/parley-$1.XXXXXX")
    chmod 711 "$TMP"
    PG_DIR="$TMP/pg"
    RESULTS="$TMP/results.tsv"
    : >"$RESULTS"
    trap _bench_cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

bench_binaries() {
    local pair var given=() bin_dir
    for pair in "$@"; do
        var=${pair%%=*}
        [[ -n ${!var:-} ]] && given+=("$var=${!var}")
    done
    if ((${#given[@]} == $#)); then
        log "benchmarking ${given[*]} (no build)"
        return 0
    fi
    log "swift build -c release"
    swift build -c release >&2
    bin_dir=$(swift build -c release --show-bin-path)
    for pair in "$@"; do
        printf -v "${pair%%=*}" '%s' "$bin_dir/${pair#*=}"
    done
}

bench_seconds() {
    local v=$1 s
    case $v in
        *h) s=$((${v%h} * 3600)) ;;
        *m) s=$((${v%m} * 60)) ;;
        *s) s=${v%s} ;;
        *) s=$v ;;
    esac
    [[ $s =~ ^[0-9]+$ ]] || die "'$v': use whole seconds (10s) or minutes (2m)"
    echo "$s"
}

bench_load_check() {
    BENCH_LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
    if awk -v l="${BENCH_LOAD_START%% *}" 'BEGIN { exit !(l >= 1.0) }'; then
        log "load average is $BENCH_LOAD_START before the benchmark: other work on this machine will skew the figures"
    fi
}

bench_wrk() {
    local out=$1
    shift
    wrk "$@" >"$out" 2>&1 || { cat "$out" >&2; die "wrk failed: wrk $*"; }
}

bench_wrk_figures() {
    awk '
        function ms(v) {
            if (v ~ /us$/) { sub(/us$/, "", v); return v / 1000 }
            if (v ~ /ms$/) { sub(/ms$/, "", v); return v + 0 }
            if (v ~ /s$/)  { sub(/s$/, "", v);  return v * 1000 }
            if (v ~ /m$/)  { sub(/m$/, "", v);  return v * 60000 }
            return v + 0
        }
        function bytes(v, n) {
            n = v + 0
            if (v ~ /GB$/) n *= 1073741824; else if (v ~ /MB$/) n *= 1048576; else if (v ~ /KB$/) n *= 1024
            return n
        }
        /^Requests\/sec:/ { rps = $2 }
        /^Transfer\/sec:/ { transfer = bytes($2) }
        /^ *99%/ { p99 = ms($2) }
        / requests in / { requests = $1 }
        /Non-2xx or 3xx responses:/ { errors += $NF; non2xx += $NF }
        /Socket errors:/ { gsub(",", ""); errors += $4 + $6 + $8 + $10 }
        END {
            if (rps == "" || requests == "") exit 1
            printf "%.0f %.2f %d %d %d %.0f\n", rps, p99, errors, requests, non2xx, transfer
        }
    ' "$1"
}

bench_pgbench() {
    local dir=$1 tps p99 failed
    shift
    rm -rf "$dir"
    mkdir -p "$dir"
    "$(pg_bin)/pgbench" "$@" -l --log-prefix="$dir/tx" >"$dir/out.txt" 2>&1 \
        || { cat "$dir/out.txt" >&2; die "pgbench failed: pgbench $*"; }
    tps=$(awk '/^tps = / { printf "%.0f", $3 }' "$dir/out.txt")
    [[ -n $tps ]] || { cat "$dir/out.txt" >&2; die "could not parse pgbench output"; }
    failed=$(awk '/^number of failed transactions:/ { print $5 }' "$dir/out.txt")
    # Per-transaction log: client_id transaction_no latency_us script_no epoch epoch_us.
    p99=$(cat "$dir"/tx.* | awk '{ print $3 }' | sort -n | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "nan"; exit } i = int(NR * 0.99); if (i < NR * 0.99) i++; if (i < 1) i = 1
        printf "%.2f", v[i] / 1000 }')
    rm -rf "$dir"
    echo "$tps $p99 ${failed:-0}"
}

bench_record() {
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$6" "${7:-0}" >>"$RESULTS"
}

bench_mean() {
    awk -F'\t' -v t="$1" -v c="$2" -v col="$3" '(t == "*" || $1 == t) && $2 == c { s += $col; n++ }
        END { if (!n) { print "nan"; exit } if (col == 6) printf "%d", s; else if (col == 5) printf "%.2f", s / n; else printf "%.0f", s / n }' \
        "$RESULTS"
}

bench_ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "n/a"; else printf "%.2f", a / b }'
}

bench_round_table() {
    local leads=$1 rate=$2 row=$3 separator="|---" rest=$1 t c r rps p99 err
    while [[ $rest == *"|"* ]]; do
        separator+="|---"
        rest=${rest#*|}
    done
    echo "| ${leads//|/ | } | Round | $rate | p99 (ms) | Errors |"
    echo "$separator|---:|---:|---:|---:|"
    while IFS=$'\t' read -r t c r rps p99 err _; do
        echo "| $("$row" "$t" "$c") | $r | $rps | $p99 | $err |"
    done <"$RESULTS"
}

bench_commit() {
    local commit
    commit=$(git -C "$PARLEY_ROOT" rev-parse --short HEAD 2>/dev/null || echo "no commit")
    [[ -n $(git -C "$PARLEY_ROOT" status --porcelain 2>/dev/null | head -n 1) ]] && commit+=" + uncommitted changes"
    echo "$commit"
}

bench_cpu() {
    sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1
}

bench_cpu_ticks() {
    local server=$1 postmaster child
    postmaster=$(head -n 1 "$PG_DIR/data/postmaster.pid" 2>/dev/null || true)
    [[ -n $postmaster ]] || die "no postmaster.pid in $PG_DIR/data"
    {
        awk '{ sub(/.*\) /, ""); print "s", $12 + $13 }' "/proc/$server/stat" 2>/dev/null || true
        awk '{ sub(/.*\) /, ""); print "d", $12 + $13 + $14 + $15 }' "/proc/$postmaster/stat" 2>/dev/null || true
        for child in $(pgrep -P "$postmaster" 2>/dev/null || true); do
            awk '{ sub(/.*\) /, ""); print "d", $12 + $13 }' "/proc/$child/stat" 2>/dev/null || true
        done
    } | awk '{ t[$1] += $2 } END { printf "%d %d\n", t["s"], t["d"] }'
}

bench_wait_search_queue() {
    local database=$1 deadline=$((SECONDS + $2)) left
    while true; do
        left=$(pg_psql "$PG_PORT" "$database" -tAc "SELECT count(*) FROM message_search_queue") \
            || die "could not read the search queue"
        ((left > 0)) || return 0
        ((SECONDS < deadline)) || die "the search indexer left $left messages queued after $2 s"
        sleep 0.25
    done
}
