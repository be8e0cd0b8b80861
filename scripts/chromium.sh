#!/usr/bin/env bash
# Debian's Chromium, which the web page's browser tests drive with Playwright (its own browser
# download cannot be reached here): installed when missing, as root with apt-get.
set -euo pipefail
if command -v chromium >/dev/null; then
    exit 0
fi
if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null; then
    echo "chromium.sh: Chromium is missing: sudo apt-get install -y chromium" >&2
    exit 1
fi
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends chromium >&2
