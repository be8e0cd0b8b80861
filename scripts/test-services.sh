#!/usr/bin/env bash
# What `make test` needs beyond Python: a PostgreSQL server, Redis and Debian's Chromium,
# installed through the project's own scripts (as root, with apt-get) when they are missing,
# the way `make demo` installs the model. Where one cannot be installed it says so in one
# line and goes on: the tests that need that part then skip, naming it in pytest's summary.
# RAT_REQUIRE_SERVICES=1 (CI) makes a missing part an error here and in the tests.
set -uo pipefail
cd "$(dirname "$0")"

required=0
[[ "${RAT_REQUIRE_SERVICES:-0}" != 0 ]] && required=1
then="the tests that need it will be skipped"
[[ "$required" == 1 ]] && then="RAT_REQUIRE_SERVICES is set, so that fails"
missing=0
try() {  # try NAME COMMAND...: install NAME, or say in one line why not
    local name="$1" why rc
    shift
    why="$("$@" 2>&1 >/dev/null)" && return 0
    rc=$?
    missing=1
    why="$(printf '%s\n' "$why" | grep -v '^\s*$' | tail -n 1)"
    echo "make test: $name is not installed (${why:-exit $rc}); $then" >&2
}

try PostgreSQL bash postgres.sh install
try Redis bash serve.sh install
try Chromium bash chromium.sh

[[ "$missing" == 1 && "$required" == 1 ]] && exit 1
exit 0
