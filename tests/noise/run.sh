#!/bin/sh
# Noise calibration: how often does the gate cry wolf, and how often does it catch a real change,
# on real profiles of a real workload run as separate processes? (`make noise`, docs/noise.md.)
#
#   sh tests/noise/run.sh [BUILD]        BUILD: the build directory holding profgate (default build)
#
# 1. Runs tests/host/train_cpu.py (Debian's PyTorch, on the CPU) N_BASE times as `base` and N_VAR
#    times as each other variant, every run its own process and seed. The runs are interleaved:
#    base runs spread evenly between the variant runs, which go round-robin, so a slow spell of
#    the machine hits every variant alike. Traces and their summaries are cached under
#    BUILD/noise/runs/STAMP/, STAMP a digest of train_cpu.py and the settings: a rerun with the
#    same settings reuses them (NOISE_FRESH=1 runs them again).
# 2. tests/noise/table.py gates pairs of those summaries with single-run, history-window and (when
#    this build takes several --baseline) multi-run baselines, under each thresholds file, and
#    prints the confusion table; BUILD/noise/table.md and BUILD/noise/table.json keep it, and a
#    copy of them and pairs.jsonl stays with the batch's runs (tests/noise/batches.py puts the
#    targets of several batches in one table).
#
# Settings (environment): N_BASE (16), N_VAR (6), ACTIVE steps per run (25), THREADS (1), SEED
# (first seed, 1000), VARIANTS ("one step10 step25 softmax copy"), NOISE_FRESH (0); the gating
# settings are table.py's (AA_PAIRS, VS_BASE, WINDOW, HIST_TRIALS, THRESHOLDS). NOISE_MODE is
# quiet (the default: the machine as it is) or busy: tests/noise/busy.sh runs beside the training
# runs as a co-tenant, bursts of CPU and memory load with stress-ng starting and stopping at random
# (seeded by SEED), and is stopped when the runs are made. TORCH_PY is the
# interpreter with torch (/usr/bin/python3), PY the one for table.py (python3).
# Exits non-zero when a run, a summary or a gate fails to produce its result.
set -eu

BUILD=${1:-build}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
case $BUILD in /*) ;; *) BUILD=$TOP/$BUILD ;; esac
PROFGATE=$BUILD/profgate
TORCH_PY=${TORCH_PY:-/usr/bin/python3}
PY=${PY:-python3}
N_BASE=${N_BASE:-16}
N_VAR=${N_VAR:-6}
ACTIVE=${ACTIVE:-25}
THREADS=${THREADS:-1}
SEED=${SEED:-1000}
VARIANTS=${VARIANTS:-one step10 step25 softmax copy}
NOISE_FRESH=${NOISE_FRESH:-0}
NOISE_MODE=${NOISE_MODE:-quiet}
SCRIPT=$TOP/tests/host/train_cpu.py

die() {
	echo "noise: $*" >&2
	exit 1
}

[ -x "$PROFGATE" ] || die "no $PROFGATE: run make first"
"$TORCH_PY" -c 'import torch' 2>/dev/null || die "$TORCH_PY has no torch (Debian: apt-get install python3-torch)"
[ "$N_BASE" -ge 7 ] || die "N_BASE must be at least 7 (a 5-run window and two more base runs)"
[ "$N_VAR" -ge 1 ] || die "N_VAR must be at least 1"
case $NOISE_MODE in
quiet) ;;
busy)
	if ! command -v stress-ng >/dev/null; then
		echo "noise: busy mode needs stress-ng; installing it (scripts/deps.sh noise)" >&2
		sh "$TOP/scripts/deps.sh" noise || die "busy mode needs stress-ng (apt-get install stress-ng)"
		command -v stress-ng >/dev/null || die "busy mode needs stress-ng (apt-get install stress-ng)"
	fi
	;;
*) die "NOISE_MODE is quiet or busy, not $NOISE_MODE" ;;
esac

NV=0
for v in $VARIANTS; do
	case $v in base) die "VARIANTS lists the other variants, not base" ;; esac
	NV=$((NV + 1))
done

SETTINGS="n_base=$N_BASE n_var=$N_VAR active=$ACTIVE threads=$THREADS seed=$SEED variants=$VARIANTS"
# quiet batches keep the stamps (and caches) they always had
[ "$NOISE_MODE" = quiet ] || SETTINGS="mode=$NOISE_MODE $SETTINGS"
STAMP=$( (sha256sum <"$SCRIPT" && echo "$SETTINGS") | sha256sum | cut -c1-12)
RUNS=$BUILD/noise/runs/$STAMP
OUT=$BUILD/noise
if [ "$NOISE_FRESH" = 1 ]; then
	rm -rf "$RUNS"
fi
mkdir -p "$RUNS"
echo "$SETTINGS" >"$RUNS/settings"

START=$(date +%s)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
echo "noise: $SETTINGS; runs in $RUNS (load average $LOAD_START)"

# The busy mode's co-tenant, in a process group of its own so that it and its stress-ng bursts
# stop together when the runs are made (or the script exits).
BUSY_PID=
stop_busy() {
	if [ -n "$BUSY_PID" ]; then
		kill -TERM "-$BUSY_PID" 2>/dev/null || kill -TERM "$BUSY_PID" 2>/dev/null || true
		wait "$BUSY_PID" 2>/dev/null || true
		BUSY_PID=
	fi
}
trap stop_busy EXIT
trap 'stop_busy; exit 130' INT TERM
if [ "$NOISE_MODE" = busy ]; then
	setsid sh "$TOP/tests/noise/busy.sh" "$SEED" $$ &
	BUSY_PID=$!
fi

# run NAME VARIANT SEED: one training run as its own process, then its summary. A run already in
# the cache (its summary written, which happens last) is kept.
run() {
	[ -s "$RUNS/$1.json" ] && return 0
	t0=$(date +%s.%N)
	load=$(cut -d' ' -f1 /proc/loadavg)
	"$TORCH_PY" "$SCRIPT" --variant "$2" --seed "$3" --threads "$THREADS" --active "$ACTIVE" \
		--out "$RUNS/$1.tmp.pt.trace.json.gz" >"$RUNS/$1.log" 2>&1 ||
		die "train_cpu.py --variant $2 --seed $3 failed: $(tail -3 "$RUNS/$1.log")"
	t1=$(date +%s.%N)
	mv "$RUNS/$1.tmp.pt.trace.json.gz" "$RUNS/$1.pt.trace.json.gz"
	"$PROFGATE" summarize "$RUNS/$1.pt.trace.json.gz" --threads 1 --output "$RUNS/$1.tmp.json" ||
		die "profgate summarize of $1 failed"
	mv "$RUNS/$1.tmp.json" "$RUNS/$1.json"
	witness=$(awk '$1 == "witness_us" { w = $2 " " $3 } $1 == "sampler_us" { s = $2 " " $3 }
		END { if (w != "" && s != "") print w, s }' "$RUNS/$1.log")
	[ -n "$witness" ] || die "train_cpu.py --variant $2 --seed $3 printed no witness_us and sampler_us lines"
	echo "$1 $2 $3 $t0 $(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }") $load $witness" >"$RUNS/$1.run"
	NEW=$((NEW + 1))
}

# The schedule: TOTAL slots; slot s is a base run when floor((s+1)*N_BASE/TOTAL) steps up
# (base runs spread evenly), else the next variant run in round-robin order.
TOTAL=$((N_BASE + N_VAR * NV))
NEW=0
s=0
b=0
k=0
while [ $s -lt $TOTAL ]; do
	if [ $(((s + 1) * N_BASE / TOTAL)) -gt $((s * N_BASE / TOTAL)) ]; then
		run "$(printf 'base-%02d' $b)" base $((SEED + b))
		b=$((b + 1))
	else
		vi=$((k % NV))
		j=$((k / NV))
		# shellcheck disable=SC2086 # the list splits into words on purpose
		set -- $VARIANTS
		shift $vi
		run "$(printf '%s-%02d' "$1" $j)" "$1" $((SEED + 1000 * (vi + 1) + j))
		k=$((k + 1))
	fi
	s=$((s + 1))
done
if [ $b -ne "$N_BASE" ] || [ $k -ne $((N_VAR * NV)) ]; then
	die "schedule: $b base and $k variant runs"
fi
stop_busy
cat "$RUNS"/*.run | sort -k4 >"$RUNS/runs.txt"
GEN_END=$(date +%s)
echo "noise: $TOTAL runs ($NEW new) in $((GEN_END - START)) s"

"$PY" "$TOP/tests/noise/table.py" --profgate "$PROFGATE" --runs "$RUNS" --out "$OUT" \
	--thresholds-dir "$TOP/thresholds" --variants "$VARIANTS" --settings "$SETTINGS" \
	--stamp "$STAMP" --load-start "$LOAD_START" --new-runs "$NEW" --gen-seconds $((GEN_END - START))
cp "$OUT/table.md" "$OUT/table.json" "$OUT/pairs.jsonl" "$RUNS/"
echo "noise: done in $(($(date +%s) - START)) s; $OUT/table.md, $OUT/table.json (a copy in $RUNS)"
