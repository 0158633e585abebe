#!/bin/sh
# Regenerate the host-profile fixtures: CPU-only torch.profiler traces of
# tests/host/train_cpu.py (25 profiled steps, one thread), in the legacy
# autograd-profiler export that Debian's python3-torch writes (legacy/), and
# two of them converted to the Kineto CPU-only layout by tests/host/to_kineto.py
# (kineto/). Timings differ on every run, so regenerating changes the bytes:
#
#   sh tests/data/host/make.sh [PYTHON_WITH_TORCH]   (default /usr/bin/python3)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../../.." && pwd)
PY=${1:-/usr/bin/python3}
mkdir -p "$HERE/legacy" "$HERE/kineto"
for run in base:1 base:2 base:3 matmul25:1; do
	v=${run%:*}
	s=${run#*:}
	"$PY" "$TOP/tests/host/train_cpu.py" --variant "$v" --seed "$s" --active 25 \
		--out "$HERE/legacy/$v-$s.pt.trace.json.gz"
done
for f in base-1 matmul25-1; do
	python3 "$TOP/tests/host/to_kineto.py" "$HERE/legacy/$f.pt.trace.json.gz" \
		"$HERE/kineto/$f.pt.trace.json.gz"
done
