#!/bin/sh
# Fan-out over a Slurm array: list the capture's profile files, submit the summarize array and the
# merge-and-gate job that waits for it (examples/slurm/*.sbatch, docs/action.md "Fan-out").
#   sh submit.sh PROFILES OUT BASELINE [TASKS] [LABEL]
# PROFILES: the folder the training job's ranks wrote; PROFILE_GLOB (default *.pt.trace.json*,
# Kineto; *.xplane.pb for JAX) picks the files. TASKS (default 64; Slurm's MaxArraySize is 1001
# unless raised) is the number of array tasks.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
profiles=${1:?usage: submit.sh PROFILES OUT BASELINE [TASKS] [LABEL]}
out=${2:?usage: submit.sh PROFILES OUT BASELINE [TASKS] [LABEL]}
baseline=${3:?usage: submit.sh PROFILES OUT BASELINE [TASKS] [LABEL]}
tasks=${4:-64}
label=${5:-slurm}
mkdir -p "$out"
find "$profiles" -type f -name "${PROFILE_GLOB:-*.pt.trace.json*}" | LC_ALL=C sort >"$out/files"
[ -s "$out/files" ] || { echo "submit.sh: no ${PROFILE_GLOB:-*.pt.trace.json*} under $profiles" >&2; exit 3; }
array=$(sbatch --parsable --array=0-$((tasks - 1)) "$here/summarize.sbatch" "$out")
gate=$(sbatch --parsable --dependency=afterok:"$array" "$here/merge-gate.sbatch" "$out" "$baseline" "$label")
echo "summaries: job $array ($tasks tasks); merge and gate: job $gate; results in $out"
