#!/bin/sh
# make test, phase by phase: runs each make target given, stops at the first that fails, and ends with each
# phase's wall time (the timing summary #31 asks for; bench/findings.md keeps the measured ones).
set -u
summary=""
status=0
total=0
for phase in "$@"; do
  start=$(date +%s)
  ${MAKE:-make} --no-print-directory "$phase"
  status=$?
  seconds=$(( $(date +%s) - start ))
  total=$(( total + seconds ))
  verdict=ok
  [ "$status" = 0 ] || verdict="FAILED (exit $status)"
  summary="$summary$(printf '  %-14s %5d s  %s' "$phase" "$seconds" "$verdict")
"
  [ "$status" = 0 ] || break
done
printf '\nmake test, by phase (wall time):\n%s  %-14s %5d s\n' "$summary" "total" "$total"
exit "$status"
