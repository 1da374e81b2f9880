#!/usr/bin/env bash
# Run the README's test command RUNS times in a row (default 5) while one busy loop per core keeps the machine
# loaded, and print each run's wall time and result. Exit 0 only when every run passed (README "Tests").
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
cores=$(nproc)
hogs=()
for _ in $(seq "$cores"); do
  python3 -c 'while True: pass' &
  hogs+=($!)
done
trap 'kill "${hogs[@]}" 2>/dev/null' EXIT
failed=0
for i in $(seq "$runs"); do
  start=$(date +%s)
  make test > "/tmp/live-trial-load-run-$i.log" 2>&1
  rc=$?
  echo "run $i: exit $rc in $(( $(date +%s) - start ))s ($(grep -E 'passed|failed' "/tmp/live-trial-load-run-$i.log" | tail -1)); log /tmp/live-trial-load-run-$i.log"
  [ "$rc" -eq 0 ] || failed=$((failed + 1))
done
echo "load test: $((runs - failed)) of $runs runs green with $cores busy loops"
[ "$failed" -eq 0 ]
