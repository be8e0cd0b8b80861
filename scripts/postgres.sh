#!/usr/bin/env bash
# A PostgreSQL server in one folder, for the tests and `make serve`: loopback only, and every
# connection needs the password this script generates (SCRAM), kept in DIR/password (0600).
#
#   scripts/postgres.sh install     install Debian's `postgresql` when no server binaries exist
#   scripts/postgres.sh bin         print the folder holding the server binaries (exit 1: none)
#   scripts/postgres.sh start DIR   initdb a cluster in DIR (once), start it on 127.0.0.1 at a
#                                   free port, wait until it accepts connections, print its URL
#                                   (the superuser's, with its password: keep it private)
#   scripts/postgres.sh url DIR     print the URL of the running cluster in DIR
#   scripts/postgres.sh stop DIR    stop it (nothing to do if it is not running)
#
# PostgreSQL refuses to run as root, so as root the server runs as the system user $PG_USER
# (default rattest, created when missing). DIR must be reachable by that user: use a folder
# under /tmp, not one inside a private (0700) folder. Only the URL goes to stdout. A cluster
# made by an earlier version of this script, with trust auth, gets its password at its next
# start.
set -euo pipefail

PG_USER="${PG_USER:-rattest}"

die() { echo "postgres.sh: $*" >&2; exit 1; }
log() { echo "postgres.sh: $*" >&2; }

# The folder holding initdb, pg_ctl and postgres: $PG_BIN, the PATH, or Debian's/RPM's places.
find_bin() {
    local dir
    for dir in "${PG_BIN:-}" "$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/x)")" \
        $(ls -d /usr/lib/postgresql/*/bin /usr/pgsql-*/bin 2>/dev/null | sort -V -r); do
        if [[ -n "$dir" && -x "$dir/initdb" && -x "$dir/pg_ctl" && -x "$dir/postgres" ]]; then
            echo "$dir"
            return 0
        fi
    done
    return 1
}

install_server() {
    local bin
    if bin="$(find_bin)"; then
        echo "$bin"
        return 0
    fi
    [[ "$(id -u)" == 0 ]] || die "no PostgreSQL server binaries found and not root: run" \
        "'sudo apt-get install -y postgresql' (or set PG_BIN to the folder holding initdb)"
    command -v apt-get >/dev/null || die "no PostgreSQL server binaries found and no apt-get:" \
        "install PostgreSQL and set PG_BIN to the folder holding initdb"
    log "installing PostgreSQL from the distribution's packages"
    # the tests make their own clusters; the package's default one would only take port 5432
    mkdir -p /etc/postgresql-common/createcluster.d
    echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.d/rat-tests.conf
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 || die "apt-get update failed"
    apt-get install -y -qq --no-install-recommends postgresql >&2 \
        || die "apt-get install postgresql failed"
    bin="$(find_bin)" || die "postgresql was installed but initdb is not where expected"
    echo "$bin"
}

# Run a command as the cluster's owner: $PG_USER when root, else the current user.
as_owner() {
    if [[ "$(id -u)" == 0 ]]; then
        (cd / && runuser -u "$PG_USER" -- "$@")
    else
        (cd / && "$@")
    fi
}

owner_name() {
    if [[ "$(id -u)" == 0 ]]; then echo "$PG_USER"; else id -un; fi
}

free_port() {
    python3 - <<'EOF' 2>/dev/null || echo $((20000 + RANDOM % 40000))
import socket
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    print(s.getsockname()[1])
EOF
}

is_running() {  # DIR BIN
    [[ -f "$1/data/postmaster.pid" ]] && as_owner "$2/pg_ctl" status -D "$1/data" >/dev/null 2>&1
}

# Write stdin to FILE as the cluster's owner, readable by that owner only (runuser's
# session may reset the umask).
owner_write() {  # FILE
    as_owner tee "$1" >/dev/null
    as_owner chmod 600 "$1"
}

# 48 hex digits: safe in a URL as it is
new_password() {
    od -An -N24 -tx1 /dev/urandom | tr -d ' \n'
}

# Only the socket in DIR and 127.0.0.1 may connect, and each with the password.
write_hba() {  # DIR
    printf '%s\n' "local all all scram-sha-256" "host all all 127.0.0.1/32 scram-sha-256" \
        | as_owner tee "$1/data/pg_hba.conf" >/dev/null
}

# A cluster from before passwords (trust auth): set one while trust still lets us in.
add_password() {  # DIR BIN USER PORT
    local pw psql
    pw="$(new_password)"
    psql="$2/psql"
    [[ -x "$psql" ]] || psql="$(command -v psql)" || die "psql is missing: install postgresql-client"
    as_owner "$psql" -X -q -h "$1/sock" -p "$4" -U "$3" -d postgres \
        -c "ALTER ROLE \"$3\" PASSWORD '$pw'" >&2 || die "could not set the password of $3"
    echo "$pw" | owner_write "$1/password"
    write_hba "$1"
    as_owner "$2/pg_ctl" reload -D "$1/data" -s >&2
    log "the cluster in $1 now takes connections with its password only"
}

start() {
    local dir="$1" bin port user attempt
    bin="$(install_server)"
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    if [[ "$(id -u)" == 0 ]]; then
        id -u "$PG_USER" >/dev/null 2>&1 || useradd --system --no-create-home \
            --shell /usr/sbin/nologin "$PG_USER" || die "cannot create user $PG_USER"
        chown "$PG_USER" "$dir"
        as_owner test -w "$dir" || die "$dir is not reachable by user $PG_USER (a parent" \
            "folder is private): use a folder under /tmp"
    fi
    chmod 700 "$dir"
    user="$(owner_name)"
    if is_running "$dir" "$bin" && [[ -f "$dir/url" && -f "$dir/password" ]]; then
        cat "$dir/url"
        return 0
    fi
    if [[ ! -f "$dir/data/PG_VERSION" ]]; then
        rm -rf "$dir/data"
        new_password | owner_write "$dir/password"
        as_owner "$bin/initdb" -D "$dir/data" -U "$user" -E UTF8 --locale=C --no-sync \
            --auth-local=scram-sha-256 --auth-host=scram-sha-256 --pwfile="$dir/password" \
            >"$dir/initdb.log" 2>&1 || die "initdb failed: $(tail -n 5 "$dir/initdb.log")"
        write_hba "$dir"
    fi
    as_owner mkdir -p "$dir/sock"
    for attempt in 1 2 3 4 5; do
        if is_running "$dir" "$bin"; then  # an old cluster, running without a password yet
            port="$(sed -n 4p "$dir/data/postmaster.pid")"
        else
            port="$(free_port)"
            if ! as_owner "$bin/pg_ctl" start -D "$dir/data" -l "$dir/server.log" -w -t 60 -s \
                -o "-c listen_addresses=127.0.0.1 -p $port -k '$dir/sock' -c max_connections=200" \
                >&2; then
                grep -q "could not bind\|already in use" "$dir/server.log" 2>/dev/null \
                    || die "the server did not start: $(tail -n 5 "$dir/server.log" 2>/dev/null)"
                log "port $port was taken (attempt $attempt); trying another"
                continue
            fi
        fi
        [[ -f "$dir/password" ]] || add_password "$dir" "$bin" "$user" "$port"
        echo "postgresql://$user:$(cat "$dir/password")@127.0.0.1:$port/postgres" \
            | owner_write "$dir/url"
        cat "$dir/url"
        return 0
    done
    die "no free port found"
}

stop() {
    local dir="$1" bin
    [[ -d "$dir/data" ]] || return 0
    bin="$(find_bin)" || return 0
    if is_running "$dir" "$bin"; then
        as_owner "$bin/pg_ctl" stop -D "$dir/data" -m fast -w -t 60 -s >&2
    fi
}

url() {
    local dir="$1" bin
    bin="$(find_bin)" || die "PostgreSQL is not installed"
    is_running "$dir" "$bin" && [[ -f "$dir/url" ]] || die "no server is running in $dir"
    cat "$dir/url"
}

case "${1:-}" in
    install) install_server ;;
    bin) find_bin ;;
    start) [[ $# == 2 ]] || die "usage: $0 start DIR"; start "$2" ;;
    stop) [[ $# == 2 ]] || die "usage: $0 stop DIR"; stop "$2" ;;
    url) [[ $# == 2 ]] || die "usage: $0 url DIR"; url "$2" ;;
    *) die "usage: $0 install | bin | start DIR | stop DIR | url DIR" ;;
esac
