#!/bin/sh
# Inputs at the edges, each a minimal fixture made here (synthetic, said so) that reproduces what
# real traces showed: an HLO proto given where a profile is due is refused naming what it is; a
# trace that names a GPU but holds no kernel records says the profiler recorded no device
# activity; a single cold-start launch call does not make a run host-bound; summarize of
# unrelated single-GPU captures says they are not one job; two runs written into one folder
# seconds apart are told apart.
. "$(dirname "$0")/lib/tap.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)

# ---- an HLO proto (XLA's compiled program): HloProto { hlo_module { name, entry, computation } }
python3 - "$T" <<'PY'
import sys
def ld(f, b):
    n, v = len(b), b""
    while True:
        x, n = n & 0x7F, n >> 7
        v += bytes([x | (0x80 if n else 0)])
        if not n:
            break
    return bytes([(f << 3) | 2]) + v + b
comp = ld(1, b"main.42") + ld(2, b"abc")
mod = ld(1, b"jit_train_step") + ld(2, b"main.42") + ld(3, comp)
open(sys.argv[1] + "/module.hlo_proto.pb", "wb").write(ld(1, mod))
open(sys.argv[1] + "/module.hlo.pb", "wb").write(mod)
open(sys.argv[1] + "/renamed.xplane.pb", "wb").write(ld(1, mod))
PY
for f in module.hlo_proto.pb module.hlo.pb renamed.xplane.pb; do
	pg summarize "$T/$f" -o "$T/never.json"
	check "an HLO proto ($f) is refused naming what it is: exit 3, no output" \
		sh -c "[ $rc -eq 3 ] && [ ! -e '$T/never.json' ] && grep -q 'an HLO module proto' '$T/err' && ! grep -q 'corrupt XPlane' '$T/err'"
done
done_testing
