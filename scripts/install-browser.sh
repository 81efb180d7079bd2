#!/bin/sh
# Headless Chromium for the browser tests (tests/test_browser_lab.py): Debian's own package, which
# Playwright drives through executable_path. Never `playwright install` (a download from outside
# Debian). Does nothing when /usr/bin/chromium is already there.
set -eu

if [ -x /usr/bin/chromium ]; then
    echo "chromium : déjà installé — $(/usr/bin/chromium --version 2>/dev/null | tail -n 1)"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
# fonts-dejavu-core: the screenshots must show readable text, not boxes, on a bare image.
$SUDO apt-get install -y chromium fonts-dejavu-core
echo "chromium : installé — $(/usr/bin/chromium --version 2>/dev/null | tail -n 1)"
