#!/usr/bin/env bash
# Debian packages that trous uses when they are there, and that its test suite needs:
#   bubblewrap  — the sandbox for students' code (without it: no grading, unless --sans-isolation)
#   util-linux  — setpriv, with which the isolation tests grade as an unprivileged user
#   chromium    — the real browser of the JupyterLab tests (driven by Playwright, never downloaded)
#   postgresql  — the shared gradebook tests (a throw-away server started by the tests)
#   php-cli     — the tests' oracle for what Moodle's PHP (strtotime) reads in a grading worksheet
# Installs only what is missing; needs root (or sudo) and Debian's package registry.
set -euo pipefail

need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
command -v setpriv >/dev/null 2>&1 || need+=(util-linux)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v php >/dev/null 2>&1 || need+=(php-cli)

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
  sudo=""
elif command -v sudo >/dev/null 2>&1; then
  sudo="sudo"
else
  echo "trous : paquets manquants (${need[*]}) et pas de droits root : installez-les avec apt-get." >&2
  exit 0
fi
echo "trous : installation de ${need[*]} (apt-get)…"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
