#!/usr/bin/env bash
# RAT served to many users: N Aegra workers (the open Agent Protocol server) on loopback,
# sharing one PostgreSQL (threads, runs, checkpoints) and one Redis (the run queue).
#
#   scripts/serve.sh install     install Debian's redis-server (as root) when it is missing
#   scripts/serve.sh start [N]   start PostgreSQL, Redis and N workers (default 2), or the ones
#                                missing; print each worker's URL, one per line
#   scripts/serve.sh stop        stop the workers, Redis and PostgreSQL (data is kept)
#   scripts/serve.sh status      the URLs of the workers running now
#   scripts/serve.sh kill I      SIGKILL worker I (0-based), as a crash would
#   scripts/serve.sh restart I   stop worker I (SIGTERM: Aegra drains its runs) and start it
#
# Everything lives in $RAT_SERVE_DIR (default /tmp/rat-serve-$USER): the PostgreSQL cluster
# (scripts/postgres.sh), Redis's files, aegra.json (made from langgraph.json), each worker's
# pid, port and log. Worker I listens on $RAT_SERVE_HOST (default 127.0.0.1) at
# $RAT_SERVE_PORT + I (default 2026 + I; RAT_SERVE_PORT=0: each worker on a free port).
# RAT_SERVE_RUNNERS=K: only workers 0..K-1 run runs, the others serve the API and queue
# (K=1 lets users' collections live in embedded Qdrant, which one process opens).
#
# Auth: with the key file of `rat serve-keys` present ($RAT_SERVE_KEYS, default in the data
# folder), every request needs a key and sees only its user's threads (rat_agent/serve/auth.py);
# RAT_SERVE_AUTH=keys insists on it, RAT_SERVE_AUTH=off serves everyone as one user and is
# refused on any address but loopback. With auth on, the context's import paths (models,
# retrievers) may name only the modules in $RAT_IMPORTS (comma-separated; none by default).
# RAT_SERVE_CORS_ORIGINS: comma-separated origins of other web apps whose pages may call the
# API (none by default; the page at /ui is the API's own origin).
# The workers see the environment this script is started with: RAT_* settings, QDRANT_URL,
# provider keys; never a model hub (HF_HUB_OFFLINE=1 unless set). Installs Debian's
# redis-server and postgresql as root when they are missing.
#
# Trust no other local user: PostgreSQL and Redis take connections only with the passwords
# generated here (PostgreSQL's workers connect as a role that is not a superuser), and every
# file in $RAT_SERVE_DIR and the data folder is readable by its owner only.
set -euo pipefail
umask 077

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${RAT_SERVE_DIR:-/tmp/rat-serve-$(id -un)}"
BASE_PORT="${RAT_SERVE_PORT:-2026}"
PY="${RAT_SERVE_PYTHON:-$ROOT/.venv/bin/python}"
START_TIMEOUT_S="${RAT_SERVE_START_TIMEOUT:-120}"
AUTH_PATH="rat_agent.serve.auth:auth"
APP_PATH="rat_agent.ui.served:app"  # bounds on requests, 4xx for what the database refuses; the page

die() { echo "serve.sh: $*" >&2; exit 1; }
log() { echo "serve.sh: $*" >&2; }

# A killed worker stays a zombie until PID 1 reaps it, which some container inits do only
# every few seconds; kill -0 succeeds on a zombie, so read its state instead.
running() {
    local stat
    [[ -d /proc ]] || { kill -0 "$1" 2>/dev/null; return; }
    stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
    stat="${stat##*) }"  # the field after the command name, which may hold spaces
    [[ "${stat:0:1}" != Z ]]
}
alive() { [[ -f "$1" ]] && running "$(cat "$1")"; }

port_open() {
    "$PY" -c "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 1)" "$1" 2>/dev/null
}

free_port() {
    "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

install_redis() {
    command -v redis-server >/dev/null && return 0
    [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null \
        || die "redis-server is missing: install it (Debian: apt-get install redis-server)"
    log "installing Redis from the distribution's packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 || die "apt-get update failed"
    apt-get install -y -qq --no-install-recommends redis-server >&2 \
        || die "apt-get install redis-server failed"
}

new_password() {
    od -An -N24 -tx1 /dev/urandom | tr -d ' \n'
}

start_redis() {
    local port pw
    mkdir -p "$DIR/redis"
    if alive "$DIR/redis/pid" && [[ -f "$DIR/redis/url" && -f "$DIR/redis/password" ]]; then
        return 0
    fi
    if alive "$DIR/redis/pid"; then  # started by an earlier version, with no password
        kill "$(cat "$DIR/redis/pid")" 2>/dev/null || true
        for _ in $(seq 50); do alive "$DIR/redis/pid" || break; sleep 0.1; done
    fi
    install_redis
    port="$(free_port)"
    pw="$(new_password)"
    echo "$pw" >"$DIR/redis/password"
    # The password goes in a private config file, not on the command line, which any local
    # user could read in the process list. No persistence: the queue holds run ids only;
    # runs themselves are rows in PostgreSQL, and the lease reaper re-queues any run whose
    # worker is gone.
    printf '%s\n' "bind 127.0.0.1" "port $port" "requirepass $pw" "protected-mode yes" \
        'save ""' "appendonly no" "daemonize yes" "dir $DIR/redis" "pidfile $DIR/redis/pid" \
        "logfile $DIR/redis/log" >"$DIR/redis/redis.conf"
    redis-server "$DIR/redis/redis.conf" >&2
    for _ in $(seq 50); do
        REDISCLI_AUTH="$pw" redis-cli -p "$port" ping >/dev/null 2>&1 && break
        sleep 0.1
    done
    REDISCLI_AUTH="$pw" redis-cli -p "$port" ping >/dev/null 2>&1 \
        || die "Redis did not start: $(tail -n 3 "$DIR/redis/log")"
    echo "redis://:$pw@127.0.0.1:$port/0" >"$DIR/redis/url"
}

# The workers' role owns the aegra database and nothing else: no superuser, no new
# databases or roles. A database from an earlier version (owned by the superuser) is
# handed over to it.
start_postgres() {
    local url rest
    url="$(bash "$ROOT/scripts/postgres.sh" start "$DIR/pg")"
    [[ -f "$DIR/aegra_password" ]] || new_password >"$DIR/aegra_password"
    "$PY" "$ROOT/scripts/aegra_database.py" "$url" "$DIR/aegra_password" >&2
    rest="${url#postgresql://*@}"
    echo "postgresql://aegra:$(cat "$DIR/aegra_password")@${rest%/postgres}/aegra" >"$DIR/database_url"
}

loopback() { [[ "$1" == 127.* || "$1" == ::1 || "$1" == localhost ]]; }

# Decided once at `start` and kept in $DIR, so `restart I` serves as the others do.
configure() {
    local host="${RAT_SERVE_HOST:-127.0.0.1}" mode="${RAT_SERVE_AUTH:-auto}" keys auth=()
    keys="$("$PY" -c 'from rat_agent.serve.keys import key_file; print(key_file())')"
    case "$mode" in
        auto) if [[ -f "$keys" ]]; then mode=keys; else mode=off; fi ;;
        keys) [[ -f "$keys" ]] || die "RAT_SERVE_AUTH=keys, but $keys does not exist: make a key with \`rat serve-keys add USER\`" ;;
        off) ;;
        *) die "RAT_SERVE_AUTH must be keys, off or auto, not '$mode'" ;;
    esac
    if [[ "$mode" == off ]] && ! loopback "$host"; then
        die "refusing to listen on $host without auth (anyone reaching it could read every user's threads): make a key with \`rat serve-keys add USER\`"
    fi
    [[ "$mode" == keys ]] && auth=(--auth "$AUTH_PATH")
    mkdir -p "$DIR"
    echo "$host" >"$DIR/host"
    echo "$keys" >"$DIR/keys"
    # Embedded Qdrant opens in one process only: RAT_SERVE_RUNNERS=1 lets worker 0 alone run
    # runs (and hold users' collections), the others serving the API and queueing for it.
    local runners="${RAT_SERVE_RUNNERS:-0}"
    [[ "$runners" =~ ^[0-9]+$ ]] || die "RAT_SERVE_RUNNERS must be a number of workers, not '$runners'"
    echo "$runners" >"$DIR/runners"
    # Users name models and retrievers by import path, and loading one calls it: with many
    # users, only the modules RAT_IMPORTS lists (none unless set).
    rm -f "$DIR/imports"
    [[ "$mode" == keys ]] && echo "${RAT_IMPORTS-}" >"$DIR/imports"
    "$PY" "$ROOT/scripts/aegra_config.py" "$ROOT/langgraph.json" --app "$APP_PATH" "${auth[@]}" \
        --cors-origins "${RAT_SERVE_CORS_ORIGINS:-}" >"$DIR/aegra.json.tmp"
    mv "$DIR/aegra.json.tmp" "$DIR/aegra.json"
    if [[ "$mode" == keys ]]; then log "auth on: keys from $keys"; else log "auth off: all requests are one user"; fi
}

auth_on() { grep -q '"auth"' "$DIR/aegra.json"; }

# the address to reach a worker at from here, and to print
reach() {
    local host
    host="$(cat "$DIR/host" 2>/dev/null || echo 127.0.0.1)"
    [[ "$host" == 0.0.0.0 || "$host" == :: ]] && host=127.0.0.1
    [[ "$host" == *:* ]] && host="[$host]"
    echo "$host"
}

# the HTTP status of a request without a key to the worker at PORT
keyless() {  # PORT
    "$PY" - "http://$(reach):$1/threads/search" <<'EOF'
import sys, urllib.error, urllib.request
request = urllib.request.Request(sys.argv[1], data=b"{}", headers={"content-type": "application/json"})
try:
    print(urllib.request.urlopen(request, timeout=10).status)
except urllib.error.HTTPError as error:
    print(error.code)
EOF
}

# Aegra serves everyone as one user when it cannot load the auth file (it only logs that):
# a worker that answers a request without a key is stopped instead.
check_auth() {  # I PORT
    local code
    code="$(keyless "$2")"
    if [[ "$code" != 401 ]]; then
        stop_worker "$1"
        die "worker $1 answered a request without a key ($code), so it did not load $AUTH_PATH: $(grep -i auth "$DIR/worker-$1/log" | tail -n 3)"
    fi
}

start_worker() {  # I [MIGRATE]
    local i="$1" migrate="${2:-false}" w="$DIR/worker-$1" port runners
    mkdir -p "$w"
    if alive "$w/pid"; then
        # a worker started before the first key was made would go on serving without auth
        if ! auth_on || [[ "$(keyless "$(cat "$w/port")")" == 401 ]]; then
            echo "http://$(reach):$(cat "$w/port")"
            return 0
        fi
        log "worker $i serves without auth: restarting it with auth"
        stop_worker "$i"
    fi
    if [[ "$BASE_PORT" == 0 ]]; then  # any free port, kept across restarts of this worker
        port="$(cat "$w/port" 2>/dev/null || free_port)"
    else
        port=$((BASE_PORT + i))
    fi
    (
        cd "$w"
        if [[ -f "$DIR/imports" ]]; then export RAT_IMPORTS="$(cat "$DIR/imports")"; fi
        export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}" TRANSFORMERS_OFFLINE="${TRANSFORMERS_OFFLINE:-1}"
        runners="$(cat "$DIR/runners" 2>/dev/null || echo 0)"
        if ((runners > 0 && i >= runners)); then export WORKER_COUNT=0; fi
        DATABASE_URL="$(cat "$DIR/database_url")" REDIS_BROKER_ENABLED=true \
            REDIS_URL="$(cat "$DIR/redis/url")" AEGRA_CONFIG="$DIR/aegra.json" \
            HOST="$(cat "$DIR/host")" RAT_SERVE_KEYS="$(cat "$DIR/keys")" PORT="$port" \
            RUN_MIGRATIONS_ON_STARTUP="$migrate" LOG_VERBOSITY=standard \
            setsid "$PY" -m aegra_api.main >>"$w/log" 2>&1 </dev/null &
        echo $! >"$w/pid"
    )
    echo "$port" >"$w/port"
    local deadline=$((SECONDS + START_TIMEOUT_S))
    until "$PY" -c "import urllib.request, sys; urllib.request.urlopen('http://$(reach):$port/health', timeout=2)" 2>/dev/null; do
        alive "$w/pid" || die "worker $i stopped while starting: $(tail -n 5 "$w/log")"
        ((SECONDS < deadline)) || die "worker $i did not answer in ${START_TIMEOUT_S} s: $(tail -n 3 "$w/log")"
        sleep 0.5
    done
    if auth_on; then check_auth "$i" "$port"; fi
    echo "http://$(reach):$port"
}

# Files an earlier version made readable by every local user, made private; so is the data
# folder (checkpoints, embedded Qdrant, the key file).
private() {
    local data
    find "$DIR" -mindepth 1 -maxdepth 1 ! -name pg -exec chmod -R go-rwx {} +
    data="$("$PY" -c 'from rat_agent.paths import data_dir; print(data_dir())')"
    chmod -R go-rwx "$data"
}

start() {
    local n="${1:-2}" i
    [[ "$n" =~ ^[1-9][0-9]*$ ]] || die "the number of workers must be a positive integer"
    "$PY" -c "import aegra_api" 2>/dev/null || die "aegra-api is not installed: run make install-serve"
    configure
    if [[ "$(id -u)" == 0 ]]; then
        log "the workers run as root: start make serve as an unprivileged user (docs/serving.md)"
    fi
    # Private, but for PostgreSQL's own user (root runs the server as another) to reach
    # $DIR/pg, which is its own and private: others may pass through $DIR, not list it.
    chmod 711 "$DIR"
    private
    start_postgres
    start_redis
    start_worker 0 true  # the first one sets up the tables; the others wait for it
    for ((i = 1; i < n; i++)); do start_worker "$i"; done
}

stop_worker() {  # returns once the process is gone and its port is free for the next one
    local w="$DIR/worker-$1" pid
    alive "$w/pid" || return 0
    pid="$(cat "$w/pid")"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 100); do running "$pid" || break; sleep 0.1; done
    if running "$pid"; then
        kill -KILL "$pid" 2>/dev/null || true
        for _ in $(seq 50); do running "$pid" || break; sleep 0.1; done
        running "$pid" && die "worker $1 (pid $pid) outlived SIGKILL"
    fi
    rm -f "$w/pid"
    for _ in $(seq 50); do port_open "$(cat "$w/port")" || return 0; sleep 0.1; done
    die "worker $1 stopped, but port $(cat "$w/port") still answers"
}

stop() {
    local w
    for w in "$DIR"/worker-*; do [[ -d "$w" ]] && stop_worker "${w##*-}"; done
    if alive "$DIR/redis/pid"; then
        kill "$(cat "$DIR/redis/pid")" 2>/dev/null || true  # SIGTERM: Redis shuts down
    fi
    [[ -d "$DIR/pg" ]] && bash "$ROOT/scripts/postgres.sh" stop "$DIR/pg"
    return 0
}

status() {
    local w
    for w in "$DIR"/worker-*; do
        [[ -d "$w" ]] && alive "$w/pid" && echo "http://$(reach):$(cat "$w/port")"
    done
    return 0
}

case "${1:-}" in
    install) install_redis ;;
    start) start "${2:-2}" ;;
    stop) stop ;;
    status) status ;;
    kill) [[ $# == 2 ]] || die "usage: $0 kill I"; alive "$DIR/worker-$2/pid" && kill -KILL "$(cat "$DIR/worker-$2/pid")" ;;
    restart) [[ $# == 2 ]] || die "usage: $0 restart I"; stop_worker "$2"; start_worker "$2" ;;
    *) die "usage: $0 install | start [N] | stop | status | kill I | restart I" ;;
esac
