#!/bin/sh
# Run a command (the example run) walled off: a new network namespace whose only interface is loopback,
# and the repository mounted read-only except build/ (where the run writes its reports). conftest.py's
# socket guard is the inner wall. Where the kernel refuses namespaces, say so and run the command as it is.
set -e
mkdir -p build
if unshare -rmn sh -c 'ip link set lo up && mount --bind build build' 2>/dev/null; then
  exec unshare -rmn sh -c 'ip link set lo up && mount --bind build build && mount --rbind "$PWD" "$PWD" &&
    mount -o remount,bind,ro "$PWD" && cd "$PWD" && exec "$@"' sh "$@"
fi
echo "WARNING: tests/offline.sh: no network or mount namespace here (unshare -rmn refused);" \
     "examples run with the in-process socket guard only and can write into the repository" >&2
exec "$@"
