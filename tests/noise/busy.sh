#!/bin/sh
# The co-tenant of `make noise`'s busy mode (NOISE_MODE=busy, tests/noise/run.sh): bursts of CPU
# and memory load that start and stop at random, as other jobs do on a shared CI runner.
#
#   sh tests/noise/busy.sh SEED [PID]
#
# Runs until killed (run.sh kills it, by its process group, when the runs are made), or until
# process PID is gone. Each burst
# is one stress-ng process (Debian's stress-ng) for 1-4 s: 1 or 2 CPU workers and half the time a
# memory worker touching 64-384 MB, then a quiet gap of 6-20 s, so that about a quarter of
# make noise's runs (1.7 s each, back to back) overlap a burst, as on the busy shared runner
# the gate is calibrated for (docs/noise.md). The schedule comes from SEED
# (awk's srand), so a rerun with the same seed loads the machine in the same pattern; where the
# bursts fall on the training runs still depends on the machine.
set -eu
SEED=${1:-1}
WATCH=${2:-}
command -v stress-ng >/dev/null || {
	echo "busy: no stress-ng (Debian: apt-get install stress-ng)" >&2
	exit 1
}
awk -v seed="$SEED" 'BEGIN {
	srand(seed)
	for (k = 0; k < 100000; k++) {
		gap = 6 + 14 * rand(); dur = 1 + int(4 * rand()); cpu = 1 + int(2 * rand())
		vm = rand() < 0.5 ? 64 + 64 * int(6 * rand()) : 0
		printf "%.1f %d %d %d\n", gap, dur, cpu, vm
	}
}' | while read -r gap dur cpu vm; do
	if [ -n "$WATCH" ] && ! kill -0 "$WATCH" 2>/dev/null; then
		exit 0
	fi
	sleep "$gap"
	if [ "$vm" -gt 0 ]; then
		stress-ng --quiet --cpu "$cpu" --vm 1 --vm-bytes "${vm}M" --timeout "${dur}s" >/dev/null 2>&1 || true
	else
		stress-ng --quiet --cpu "$cpu" --timeout "${dur}s" >/dev/null 2>&1 || true
	fi
done
