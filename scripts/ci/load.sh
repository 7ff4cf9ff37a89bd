#!/usr/bin/env bash
# A bounded CPU hog for the "green under load" check: keeps every core busy (one busy loop per core,
# or N) for at most SECONDS, then stops by itself; Ctrl-C or a TERM stops it at once.
#
#   bash scripts/ci/load.sh [SECONDS=3600] [N=nproc] &   # then, beside it:
#   npm test                                              # or: bash .ci/run
#   kill %1                                               # or let it time out
#
# The loops run at normal priority (nice 0), like another user's build would, and touch no disk or
# network.
set -euo pipefail
seconds=${1:-3600}
n=${2:-$(nproc)}
pids=()
stop() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap 'stop; exit 0' INT TERM
trap stop EXIT
for _ in $(seq "$n"); do
  timeout "$seconds" sh -c 'while :; do :; done' &
  pids+=($!)
done
echo "load: $n busy loop(s) for at most ${seconds}s (pids ${pids[*]})" >&2
wait
