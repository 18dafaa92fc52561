"""Compile time of CPU kernels on the kernel environment's path: plain C++ (no torch headers) built
by g++ into a shared object inside the sandbox, exactly as ``perfalign_kernels.load_cpp`` does,
each compile cold (its own sandboxed execution, fresh /tmp, nothing cached). Target: median <= 10 s.

    .venv/bin/python benchmarks/kernel_compile_bench.py [--repeats 3]

Sources: the C++ of kernelenv/oracles/level1/*.py (extracted from their SOURCE string) plus a
blocked matmul. Prints each compile's wall and CPU seconds and the median.
"""
from __future__ import annotations

import argparse
import ast
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from perfalign.kernelenv.guest.server import CPP_COMMAND  # noqa: E402
from perfalign.sandbox import Job, Limits, Sandbox, TestCase  # noqa: E402

MATMUL = r"""
#include <cstdint>
extern "C" void matmul(const float* a, const float* b, float* c, int64_t n, int64_t k, int64_t m) {
    const int64_t T = 64;
    #pragma omp parallel for
    for (int64_t i0 = 0; i0 < n; i0 += T)
        for (int64_t p0 = 0; p0 < k; p0 += T)
            for (int64_t i = i0; i < (i0 + T < n ? i0 + T : n); ++i)
                for (int64_t p = p0; p < (p0 + T < k ? p0 + T : k); ++p) {
                    float av = a[i * k + p];
                    #pragma omp simd
                    for (int64_t j = 0; j < m; ++j) c[i * m + j] += av * b[p * m + j];
                }
}
"""

# The sandboxed program: write the source, run the exact load_cpp command, report the wall time.
PROGRAM = r"""
import json, subprocess, sys, time
job = json.loads(sys.stdin.read())
open("/tmp/k.cpp", "w").write(job["source"])
t0 = time.monotonic()
p = subprocess.run(job["argv"] + ["-o", "/tmp/k.so", "/tmp/k.cpp"], capture_output=True, text=True)
print(json.dumps({"ok": p.returncode == 0, "wall_s": time.monotonic() - t0, "err": p.stderr[-500:]}))
"""


def sources() -> dict[str, tuple[str, tuple[str, ...]]]:
    out = {}
    for path in sorted((ROOT / "kernelenv" / "oracles" / "level1").glob("*.py")):
        tree = ast.parse(path.read_text())
        src = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                   and any(isinstance(t, ast.Name) and t.id == "SOURCE" for t in n.targets))
        flags = ("-ffast-math",) if "-ffast-math" in path.read_text() else ()
        out[path.stem] = (src, flags)
    out["blocked_matmul"] = (MATMUL, ())
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3, help="cold compiles per source")
    args = ap.parse_args()
    rows = []
    with Sandbox(workers=1) as sb:
        for name, (src, flags) in sources().items():
            for _ in range(args.repeats):
                tc = TestCase(json.dumps({"source": src, "argv": [*CPP_COMMAND, *flags]}))
                r = sb.run_job(Job(PROGRAM, "python3", [tc], Limits(time_s=60, memory_mb=1024), keep_output=True))
                rep = json.loads((r.tests[0].output or "{}").strip() or "{}")
                if not rep.get("ok"):
                    raise SystemExit(f"{name}: compile failed: {r.verdict} {rep.get('err') or r.tests[0].message}")
                rows.append((name, rep["wall_s"], r.tests[0].cpu_time_s))
    walls, cpus = [w for _, w, _ in rows], [c for _, _, c in rows]
    print(f"{'kernel':24s} {'wall s':>8s} {'cpu s (whole run)':>18s}")
    for name, w, c in rows:
        print(f"{name:24s} {w:8.3f} {c:18.3f}")
    print(f"\ncompiles: {len(walls)} (cold, one sandboxed execution each)   command: {' '.join(CPP_COMMAND)}")
    print(f"median compile wall: {statistics.median(walls):.3f} s   max: {max(walls):.3f} s   target <= 10 s")
    print(f"median CPU of the whole sandboxed execution (python start-up + g++): {statistics.median(cpus):.3f} s")


if __name__ == "__main__":
    main()
