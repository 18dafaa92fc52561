#!/bin/sh
# Build gemm_modes from the harness's own reference and slow TUs of PolyBench gemm (MEDIUM, -O3 as the
# harness compiles a candidate; each TU's kernel_gemm renamed), then run it in N fresh processes
# (default 8; each its own address layout); with ONLY, N rounds of one process per variant listed,
# back to back (the harness's way: the reference and the slow control each in its own process).
# From the repository root:
#   sh docs/measurements/price-2026-11-29/gemm_modes.sh [N] [CALLS] [ONLY, e.g. 01]
# NOINLINE=1: the slow control's static kernel marked noinline, so its two runs execute one
# out-of-line copy of the kernel instead of two copies inlined into the wrapper.
set -e
D=$(mktemp -d); HERE=$(dirname "$0")
.venv/bin/python - "$D" <<'PY'
import sys
from perfalign.evaluation.tasks.polybench import PolyBenchCheckout
p = PolyBenchCheckout("/work/shared/external/polybench").problem("gemm", "reduced")
import os
slow = p.slow
if os.environ.get("NOINLINE"):
    slow = slow.replace("static void perfalign_ref_", "__attribute__((noinline)) static void perfalign_ref_")
for name, code in (("ref", p.reference), ("slow", slow)):
    open(f"{sys.argv[1]}/{name}.cpp", "w").write(f"{p.candidate_prefix['T']}\n#define kernel_gemm {name}_gemm\n{code}")
PY
for f in ref slow; do g++ -O3 -std=c++17 -c "$D/$f.cpp" -o "$D/$f.o"; done
g++ -O2 -std=c++17 "$HERE/gemm_modes.cpp" "$D/ref.o" "$D/slow.o" -o "$D/gemm_modes"
for i in $(seq "${1:-8}"); do
  if [ -n "$3" ]; then
    for v in $(echo "$3" | sed 's/./& /g'); do printf "round %s " "$i"; "$D/gemm_modes" "${2:-60}" "$v"; done
  else "$D/gemm_modes" "${2:-60}"; fi
done
rm -rf "$D"
