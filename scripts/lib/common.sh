# shellcheck shell=bash
# Shared helpers for Parley's scripts. Source it; do not execute it.
#
#   ensure_apt_packages PKG...        install only the missing Debian packages (apt-get update at most once)
#   pg_bin                            directory of the PostgreSQL server binaries (initdb, pg_ctl, pgbench, ...)
#   pg_cluster_start DIR [PORT] [--fast]
#                                     create DIR/data on first use, then start it on 127.0.0.1:PORT and the unix
#                                     socket DIR/socket (log: DIR/log/postgres.log). Without PORT the settings of
#                                     the previous start are reused. --fast (throwaway test clusters only) turns
#                                     off fsync, synchronous_commit and full_page_writes. Clients authenticate
#                                     with pg_password (scram-sha-256, never trust: any local user could connect);
#                                     a cluster made with trust by an older script is converted. Exports PGPASSWORD.
#   pg_replica_start PRIMARY_DIR DIR [PORT]
#                                     a streaming replica of the running cluster PRIMARY_DIR: made on first use
#                                     with `pg_basebackup -R` (replication over 127.0.0.1 as user parley, which
#                                     pg_hba allows; a replication slot, so it never misses WAL however far it
#                                     falls behind), then started like pg_cluster_start DIR PORT --fast (a hot
#                                     standby: read-only queries while it replays). Returns once it accepts
#                                     connections and has the primary's databases as of the start.
#   pg_cluster_stop DIR               fast shutdown (no-op when not running)
#   pg_cluster_kill DIR               immediate shutdown, like a crash (outage tests)
#   pg_cluster_running DIR            exit status 0 when the postmaster is up
#   pg_cluster_port DIR               the TCP port of the cluster
#   pg_password                       the password of user parley in the clusters these scripts create (one per
#                                     checkout, .parley/pg-password, mode 600; PARLEY_PG_PASSWORD_FILE overrides)
#   pg_url PORT [DB]                  postgresql://parley:PASSWORD@127.0.0.1:PORT/DB (DB defaults to parley)
#   pg_psql PORT DB [psql args...]    psql as user parley over TCP, ON_ERROR_STOP, no psqlrc
#   pg_createdb PORT NAME             create database NAME if missing
#   nats_start DIR [PORT]             start nats-server (Debian's package; installed when missing) on 127.0.0.1:PORT,
#                                     or on the port of DIR's previous start; log DIR/nats.log, pid DIR/nats.pid;
#                                     returns once it accepts connections. No-op when running.
#   nats_stop DIR                     SIGTERM and wait (no-op when not running)
#   nats_url DIR                      nats://127.0.0.1:PORT of DIR's server
#   free_port                         print a TCP port nobody listens on (outside the ephemeral range)
#   wait_http URL TIMEOUT [PID]       wait until URL answers 2xx (TIMEOUT in seconds); fail early if PID dies
#   websocket_venv                    print the virtualenv with Python's WebSocket client (websockets 13.1, from
#                                     PyPI), installing it when missing (PARLEY_E2E_VENV, default .parley/venv)
#   log MSG / die MSG                 messages on stderr
#
# Clusters are owned by the invoking user; when that is root they belong to "postgres" (initdb refuses root)
# and every PostgreSQL server command runs through `runuser -u postgres --`.

if [[ -n ${_PARLEY_COMMON_SOURCED:-} ]]; then
    return 0
fi
_PARLEY_COMMON_SOURCED=1

# runuser and nginx live in /usr/sbin, which minimal environments leave out of PATH.
case ":$PATH:" in
    *:/usr/sbin:*) ;;
    *) PATH="$PATH:/usr/sbin:/sbin" ;;
esac

PARLEY_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
export PARLEY_ROOT

log() {
    printf '[%s] %s\n' "${PARLEY_LOG_TAG:-parley}" "$*" >&2
}

die() {
    log "error: $*"
    exit 1
}

# ---------------------------------------------------------------------------------------------------------------
# Packages

_apt_installed() {
    local status
    status=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) || return 1
    [[ $status == "install ok installed" ]]
}

ensure_apt_packages() {
    local missing=() pkg sudo=()
    for pkg in "$@"; do
        _apt_installed "$pkg" || missing+=("$pkg")
    done
    ((${#missing[@]} == 0)) && return 0

    if ((EUID != 0)); then
        command -v sudo >/dev/null 2>&1 || die "missing packages (${missing[*]}) and no sudo; install them as root"
        sudo=(sudo -n)
    fi
    log "installing ${missing[*]}"
    local apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -qq -o DPkg::Lock::Timeout=300)
    # One `apt-get update` per run, also across nested scripts (scripts/test -> scripts/e2e/*.sh).
    if [[ -z ${PARLEY_APT_UPDATED:-} ]]; then
        "${apt[@]}" update >/dev/null || die "apt-get update failed"
        export PARLEY_APT_UPDATED=1
    fi
    "${apt[@]}" install -y --no-install-recommends "${missing[@]}" >/dev/null \
        || die "apt-get install ${missing[*]} failed"
}

# ---------------------------------------------------------------------------------------------------------------
# PostgreSQL

pg_bin() {
    if [[ -n ${PARLEY_PG_BIN:-} ]]; then
        printf '%s\n' "$PARLEY_PG_BIN"
        return 0
    fi
    local dir
    dir=$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1)
    [[ -n $dir && -x $dir/pg_ctl ]] || die "PostgreSQL server binaries not found under /usr/lib/postgresql"
    printf '%s\n' "$dir"
}

# Absolute path of an existing directory (the server commands run from /).
_pg_abs() {
    if [[ -d $1 ]]; then
        (cd "$1" && pwd -P)
    else
        printf '%s\n' "$1"
    fi
}

# Runs a server-side command as the owner of the clusters (postgres when we are root).
_pg_as_owner() {
    if ((EUID == 0)); then
        (cd / && runuser -u postgres -- "$@")
    else
        "$@"
    fi
}

# As root: make sure the postgres user can traverse every ancestor of DIR (adds o+x, never o+r).
_pg_make_traversable() {
    local target=$1 path="" part
    local -a parts
    IFS=/ read -r -a parts <<<"${target#/}"
    for part in "${parts[@]}"; do
        [[ -z $part ]] && continue
        path+="/$part"
        if ! runuser -u postgres -- test -x "$path" 2>/dev/null; then
            log "chmod o+x $path (so that the postgres user can reach $target)"
            chmod o+x "$path"
        fi
    done
}

pg_cluster_running() {
    local dir
    dir=$(_pg_abs "$1")
    [[ -f $dir/data/PG_VERSION ]] || return 1
    _pg_as_owner "$(pg_bin)/pg_ctl" -D "$dir/data" status >/dev/null 2>&1
}

pg_cluster_port() {
    local dir=$1
    [[ -f $dir/port ]] || die "no port recorded for cluster $dir (start it once with a port)"
    cat "$dir/port"
}

pg_cluster_start() {
    local dir=$1 port=${2:-} fast=0 bin
    if [[ ${3:-} == --fast ]]; then
        fast=1
    elif [[ -n ${3:-} ]]; then
        die "pg_cluster_start: unknown option $3"
    fi
    bin=$(pg_bin)

    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd -P)
    mkdir -p "$dir/socket" "$dir/log"
    if ((EUID == 0)); then
        getent passwd postgres >/dev/null || die "user postgres does not exist (is the postgresql package installed?)"
        _pg_make_traversable "$dir"
        chown postgres:postgres "$dir" "$dir/socket" "$dir/log"
        [[ -d $dir/data ]] && chown postgres:postgres "$dir/data"
    fi

    if [[ ! -f $dir/data/PG_VERSION ]]; then
        # An interrupted initdb leaves a partial directory behind; initdb wants it empty.
        rm -rf "${dir:?}/data"
        # initdb reads the password from a file its owner can read; it is removed right after.
        local pwfile="$dir/initdb-password"
        (umask 077 && pg_password >"$pwfile")
        if ((EUID == 0)); then chown postgres:postgres "$pwfile"; fi
        local initdb_args=(-D "$dir/data" --auth=scram-sha-256 --pwfile="$pwfile" --username=parley --encoding=UTF8
            --locale=C)
        ((fast)) && initdb_args+=(--no-sync)
        if ! _pg_as_owner "$bin/initdb" "${initdb_args[@]}" >"$dir/log/initdb.log" 2>&1; then
            rm -f "$pwfile"
            cat "$dir/log/initdb.log" >&2
            die "initdb failed for $dir/data"
        fi
        rm -f "$pwfile"
        printf "\n# Parley: per-cluster settings written by scripts/lib/common.sh\ninclude_if_exists = 'parley.conf'\n" \
            >>"$dir/data/postgresql.conf"
    fi

    if pg_cluster_running "$dir"; then
        if [[ -n $port && -f $dir/port && $port != "$(cat "$dir/port")" ]]; then
            log "PostgreSQL in $dir is already running on port $(cat "$dir/port"); port $port ignored"
        fi
        return 0
    fi

    if [[ -n $port ]]; then
        local socket_dir="$dir/socket" settings
        # Unix socket paths are limited to 107 bytes; fall back to TCP only for very long directories.
        if ((${#socket_dir} + 20 > 107)); then
            log "socket path under $socket_dir too long; the cluster listens on TCP only"
            socket_dir=""
        fi
        settings="listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$socket_dir'
"
        if ((fast)); then
            # Every suite runs at once, each live server with its pool, listeners, presence and workers: 300 was
            # exhausted in a clean-clone CI run ("too many clients already").
            settings+="max_connections = 1000
# streaming replicas (pg_replica_start): the defaults, spelled out
wal_level = replica
max_wal_senders = 10
# throwaway cluster: durability off for speed
fsync = off
synchronous_commit = off
full_page_writes = off
"
        else
            settings+="max_connections = 300
"
        fi
        printf '%s' "$settings" >"$dir/data/parley.conf"
        if ((EUID == 0)); then chown postgres:postgres "$dir/data/parley.conf"; fi
        printf '%s\n' "$port" >"$dir/port"
    else
        [[ -f $dir/data/parley.conf && -f $dir/port ]] || die "pg_cluster_start $dir: no port given and none recorded"
        port=$(cat "$dir/port")
    fi

    if ! _pg_as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/log/postgres.log" -w -t 60 -s start >/dev/null 2>&1; then
        tail -n 30 "$dir/log/postgres.log" >&2 || true
        die "could not start PostgreSQL in $dir (port $port)"
    fi
    local i
    for ((i = 0; i < 100; i++)); do
        if "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -U parley -d postgres; then
            _pg_require_password "$dir" "$port"
            return 0
        fi
        sleep 0.1
    done
    die "PostgreSQL in $dir does not accept connections on 127.0.0.1:$port"
}

pg_replica_start() {
    local primary=$1 dir=$2 port=${3:-} primary_port hba slot
    primary=$(_pg_abs "$primary")
    pg_cluster_running "$primary" || die "pg_replica_start: the primary in $primary is not running"
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd -P)
    if [[ ! -f $dir/data/PG_VERSION ]]; then
        primary_port=$(pg_cluster_port "$primary")
        hba="$primary/data/pg_hba.conf"
        # initdb's pg_hba.conf allows replication from 127.0.0.1; a cluster whose file lost the line gets it back.
        if ! grep -Eq '^[[:space:]]*host[[:space:]]+replication[[:space:]]+(all|parley)[[:space:]]+127\.0\.0\.1/32' "$hba"; then
            printf 'host replication parley 127.0.0.1/32 scram-sha-256\n' >>"$hba"
            _pg_as_owner "$(pg_bin)/pg_ctl" -D "$primary/data" -s reload >/dev/null
        fi
        if ((EUID == 0)); then
            _pg_make_traversable "$dir"
            chown postgres:postgres "$dir"
        fi
        rm -rf "${dir:?}/data"
        # A physical replication slot keeps the primary's WAL until the replica has it: without one, a replica that
        # fell behind under load (every test's CREATE DATABASE is WAL) asked for removed WAL and never caught up.
        slot="replica_$(basename "$dir" | tr -c 'a-zA-Z0-9_\n' '_')"
        pg_psql "$primary_port" postgres -c \
            "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '$slot'" >/dev/null
        # -R writes standby.signal and primary_conninfo (with the slot); the copied parley.conf is rewritten by the
        # start below.
        if ! _pg_as_owner "$(pg_bin)/pg_basebackup" -d "$(pg_url "$primary_port" postgres)" -D "$dir/data" -R \
            -C -S "$slot" -X stream -c fast --no-sync >"$dir/basebackup.log" 2>&1; then
            cat "$dir/basebackup.log" >&2
            rm -rf "${dir:?}/data"
            die "pg_basebackup from the cluster in $primary failed"
        fi
        [[ -n $port ]] || port=$(free_port)
    fi
    pg_cluster_start "$dir" "$port" --fast
    # The primary keeps what the replica's queries still read, so its cleanup never cancels them (recommended for a
    # replica that serves reads; the tests count where each read ran). A replica far behind cancelled such a read
    # at once instead of waiting for it.
    if ! grep -q '^hot_standby_feedback = on' "$dir/data/parley.conf"; then
        printf 'hot_standby_feedback = on\n' >>"$dir/data/parley.conf"
        _pg_as_owner "$(pg_bin)/pg_ctl" -D "$dir/data" -s reload >/dev/null
    fi
}

pg_password() {
    local file=${PARLEY_PG_PASSWORD_FILE:-$PARLEY_ROOT/.parley/pg-password} tmp
    if [[ ! -s $file ]]; then
        mkdir -p "$(dirname "$file")"
        tmp="$file.$$"
        (umask 077 && od -An -tx1 -N24 /dev/urandom | tr -d ' \n' >"$tmp")
        # Two scripts starting at once keep whichever password landed first.
        mv -n "$tmp" "$file" 2>/dev/null || true
        rm -f "$tmp"
    fi
    cat "$file"
}

# A cluster initialised with trust by an older version of these scripts gets the password and scram-sha-256.
_pg_require_password() {
    local dir=$1 port=$2 hba
    export PGPASSWORD
    PGPASSWORD=$(pg_password)
    hba="$dir/data/pg_hba.conf"
    if grep -Eq '^[^#]*[[:space:]]trust([[:space:]]|$)' "$hba"; then
        log "PostgreSQL in $dir accepted every local user (trust): setting a password"
        pg_psql "$port" postgres -c "SET password_encryption = 'scram-sha-256'; ALTER ROLE parley PASSWORD '$PGPASSWORD'"
        sed -i -E 's/^([^#]*[[:space:]])trust([[:space:]]|$)/\1scram-sha-256\2/' "$hba"
        _pg_as_owner "$(pg_bin)/pg_ctl" -D "$dir/data" -s reload >/dev/null
    fi
}

pg_cluster_stop() {
    local dir
    dir=$(_pg_abs "$1")
    pg_cluster_running "$dir" || return 0
    _pg_as_owner "$(pg_bin)/pg_ctl" -D "$dir/data" -m fast -w -t 60 -s stop >/dev/null
}

pg_cluster_kill() {
    local dir
    dir=$(_pg_abs "$1")
    pg_cluster_running "$dir" || return 0
    _pg_as_owner "$(pg_bin)/pg_ctl" -D "$dir/data" -m immediate -w -t 60 -s stop >/dev/null
}

pg_url() {
    printf 'postgresql://parley:%s@127.0.0.1:%s/%s\n' "$(pg_password)" "$1" "${2:-parley}"
}

pg_psql() {
    local port=$1 db=$2
    shift 2
    PGPASSWORD=$(pg_password) PGCONNECT_TIMEOUT=10 "$(pg_bin)/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U parley -d "$db" "$@"
}

pg_createdb() {
    local port=$1 name=$2
    [[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "pg_createdb: unsupported database name '$name'"
    if [[ -z $(pg_psql "$port" postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$name'") ]]; then
        pg_psql "$port" postgres -c "CREATE DATABASE \"$name\""
    fi
}

# ---------------------------------------------------------------------------------------------------------------
# Network

# ---------------------------------------------------------------------------------------------------------------
# NATS (the relay between instances when PARLEY_RELAY=nats://...)

nats_running() {
    local dir=$1
    [[ -f $dir/nats.pid ]] && kill -0 "$(cat "$dir/nats.pid")" 2>/dev/null
}

nats_start() {
    local dir=$1 port=${2:-} bin deadline
    ensure_apt_packages nats-server
    bin=$(command -v nats-server || echo /usr/sbin/nats-server)
    mkdir -p "$dir"
    if nats_running "$dir"; then return 0; fi
    if [[ -z $port ]]; then
        [[ -f $dir/nats.port ]] || die "nats_start: no port given and none recorded in $dir"
        port=$(cat "$dir/nats.port")
    fi
    echo "$port" >"$dir/nats.port"
    "$bin" -a 127.0.0.1 -p "$port" -n "parley-$port" </dev/null >>"$dir/nats.log" 2>&1 &
    echo $! >"$dir/nats.pid"
    deadline=$((SECONDS + 20))
    until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
        nats_running "$dir" || { tail -n 20 "$dir/nats.log" >&2; die "nats-server did not start (port $port)"; }
        ((SECONDS < deadline)) || die "nats-server did not accept connections on port $port within 20 s"
        sleep 0.05
    done
}

nats_stop() {
    local dir=$1 pid deadline
    nats_running "$dir" || return 0
    pid=$(cat "$dir/nats.pid")
    kill -TERM "$pid" 2>/dev/null || true
    deadline=$((SECONDS + 20))
    while kill -0 "$pid" 2>/dev/null; do
        ((SECONDS < deadline)) || { kill -KILL "$pid" 2>/dev/null || true; break; }
        sleep 0.05
    done
    rm -f "$dir/nats.pid"
}

nats_url() { echo "nats://127.0.0.1:$(cat "$1/nats.port")"; }

free_port() {
    local used=" " hex port i
    # Every local TCP port in use (any state), from the kernel's tables (hex in column 2, "ADDR:PORT").
    while read -r hex; do
        used+="$((16#$hex)) "
    done < <(awk 'FNR > 1 { n = split($2, a, ":"); print a[n] }' /proc/net/tcp /proc/net/tcp6 2>/dev/null)
    for ((i = 0; i < 1000; i++)); do
        # 15000-31999: below the default ephemeral range (32768-60999), so clients never collide with it.
        port=$((15000 + (RANDOM * 32768 + RANDOM) % 17000))
        if [[ $used != *" $port "* ]]; then
            printf '%s\n' "$port"
            return 0
        fi
    done
    die "free_port: no free port found"
}

wait_http() {
    local url=$1 timeout=$2 pid=${3:-} deadline
    deadline=$((SECONDS + timeout))
    while ((SECONDS < deadline)); do
        if curl -fsS -o /dev/null --max-time 2 "$url" 2>/dev/null; then
            return 0
        fi
        if [[ -n $pid ]] && ! kill -0 "$pid" 2>/dev/null; then
            log "process $pid exited while waiting for $url"
            return 1
        fi
        sleep 0.1
    done
    log "timed out after ${timeout}s waiting for $url"
    return 1
}

# ---------------------------------------------------------------------------------------------------------------
# Python clients (scripts/e2e, scripts/chaos)

websocket_venv() {
    local venv=${PARLEY_E2E_VENV:-$PARLEY_ROOT/.parley/venv} version=13.1 installed
    installed=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("websockets"))' 2>/dev/null || true)
    if [[ $installed != "$version" ]]; then
        ensure_apt_packages python3-venv >&2
        log "installing websockets $version into $venv"
        [[ -x $venv/bin/python ]] || { mkdir -p "$(dirname "$venv")" && python3 -m venv "$venv"; } || return 1
        "$venv/bin/pip" install --quiet --disable-pip-version-check "websockets==$version" >&2 || return 1
    fi
    printf '%s\n' "$venv"
}

# ---------------------------------------------------------------------------------------------------------------
# Secrets for throwaway runs

# Exports a random PARLEY_MASTER_KEY (64 hex chars) unless one is set: for tests and benchmarks only, whose
# databases are thrown away with the key. Real deployments keep one stable key (scripts/run stores it in .parley/).
ensure_throwaway_master_key() {
    if [[ -z ${PARLEY_MASTER_KEY:-} ]]; then
        PARLEY_MASTER_KEY=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
        export PARLEY_MASTER_KEY
    fi
}
