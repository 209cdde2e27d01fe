#!/usr/bin/env bash
# Install headless Chromium from the Debian packages (package `chromium`), for the
# real-browser test of the HTML leaderboard report (tests/test_report_leaderboard.py).
# Idempotent: returns at once when /usr/bin/chromium exists; otherwise
# apt-get update + apt-get install -y chromium (root is needed).
#
#   sudo .ci/setup_chromium.sh
#
# Waits for the dpkg lock (another CI step, e.g. .ci/setup_slurm.sh, may be
# installing packages at the same time) instead of failing.
set -euo pipefail

CHROMIUM=/usr/bin/chromium
LOCK_TIMEOUT="${CHROMIUM_SETUP_LOCK_TIMEOUT:-600}"

log() { echo "setup_chromium: $*" >&2; }

if [[ -x "$CHROMIUM" ]]; then
    log "$CHROMIUM already installed ($("$CHROMIUM" --version 2>/dev/null || echo 'version unknown'))"
    exit 0
fi

if [[ "$(id -u)" -ne 0 ]]; then
    log "root is needed to install the Debian package 'chromium' (run: sudo $0)"
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
APT=(apt-get -o "DPkg::Lock::Timeout=$LOCK_TIMEOUT" -q)
log "installing the Debian package 'chromium'"
"${APT[@]}" update
"${APT[@]}" install -y --no-install-recommends chromium fonts-dejavu-core

if [[ ! -x "$CHROMIUM" ]]; then
    log "apt-get finished but $CHROMIUM is missing"
    exit 1
fi
log "installed: $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM")"
