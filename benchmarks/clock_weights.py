"""The prices of the counted clocks' costly work, measured natively on this machine
(sandbox/clock.py INSTRUCTION_WEIGHTS and FAULT_PAGES; docs/sandbox.md, "Priced work").

Each costly operation runs in a dependent chain (its latency: the next one waits for it), beside
plain integer adds in four independent chains in the same process (ordinary code's throughput,
several instructions a cycle): the weight is ns per operation over ns per plain add, i.e. how many
ordinary instructions the operation costs in time. A page fault (first write to a
fresh anonymous page, zero-fill) is priced the same way, in pages of 4096 plain instructions, the
C library's page write under the count, rounded up, and at least 2 (a fault must never cost the
count less than the page of memset it replaces, natively several times cheaper: the "memset_page"
line). With --pairs, also the five priced attacks of tests/sandbox/test_clock_priced.py
beside their honest twins: native CPU time and the count under each clock, in one run.

    .venv/bin/python benchmarks/clock_weights.py [--repeats 5] [--pairs]
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MICRO = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
static double now(void){
  struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&t); return t.tv_sec+t.tv_nsec*1e-9; }
#define TIME(name, n, init, body) { init; double t0=now(); for(long i=0;i<(n);i++){ body; } \
  printf("%s %.4f\n", name, (now()-t0)/(n)*1e9); }
int main(void){
  long n=10000000;
  TIME("plain", n, unsigned long a=1; unsigned long b=1; unsigned long c=1; unsigned long e=1,
       __asm__ volatile("add %0,%0\n\tadd %1,%1\n\tadd %2,%2\n\tadd %3,%3":"+r"(a),"+r"(b),"+r"(c),"+r"(e)))
  TIME("transcendental", n/10, double x=0.5, __asm__ volatile("fsin":"+t"(x)))
  TIME("div", n, unsigned long a=~0ul; unsigned long d=0,
       d=0; __asm__ volatile("divq %2":"+a"(a),"+d"(d):"r"(3ul)); a|=1ul<<63)
  TIME("sqrt", n, double x=2.0, __asm__ volatile("sqrtsd %0,%0":"+x"(x)))
  long sz=32<<20, pages=sz/4096; double tf=0;
  for(int r=0;r<4;r++){ char* p=(char*)mmap(0,sz,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
    double t0=now(); for(long i=0;i<sz;i+=4096) p[i]=1; tf+=now()-t0; munmap(p,sz); }
  printf("fault %.4f\n", tf/(4*pages)*1e9);
  char* q=(char*)malloc(4<<20); for(long i=0;i<(4<<20);i++) q[i]=1;
  TIME("memset_page", 2000, (void)0, memset(q+(i%1024)*4096,(int)i,4096); __asm__ volatile("":::"memory"))
  return 0; }
"""


def measure(repeats: int) -> dict[str, float]:
    """Median ns per operation of each chain over ``repeats`` runs of the micro-benchmark."""
    with tempfile.TemporaryDirectory() as d:
        src, exe = Path(d) / "micro.c", Path(d) / "micro"
        src.write_text(MICRO)
        subprocess.run(["gcc", "-O2", "-o", str(exe), str(src)], check=True)
        runs: dict[str, list[float]] = {}
        for _ in range(repeats):
            for line in subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.splitlines():
                name, ns = line.split()
                runs.setdefault(name, []).append(float(ns))
    return {k: statistics.median(v) for k, v in runs.items()}


def prices(ns: dict[str, float]) -> tuple[dict[str, int], int]:
    """(INSTRUCTION_WEIGHTS, FAULT_PAGES) from the measured ns per operation."""
    plain = ns["plain"] / 4  # four independent adds per iteration: ordinary code's throughput
    weights = {k: max(1, round(ns[k] / plain)) for k in ("transcendental", "div", "sqrt")}
    return weights, max(2, math.ceil(ns["fault"] / plain / 4096))


def pairs() -> None:
    """The priced attacks beside their honest twins: native CPU time (median of 5) and each count."""
    from perfalign.sandbox import Job, Limits, Sandbox, TestCase
    from tests.sandbox.test_clock_priced import ATTACKS, PAIRS_CPP

    lim = Limits(time_s=5.0, memory_mb=512, output_mb=4, processes=32)
    print(f"{'attack':<10} {'clock':<13} {'honest':>14} {'attack':>14} {'attack/honest':>14}")
    with Sandbox(backend="bwrap", workers=1, calibrate=False) as sb:
        for name, (mode, size, reps) in ATTACKS.items():
            for clock in ("cpu", "instructions", "cycles"):
                vals = []
                for honest in (1, 0):
                    job = Job(PAIRS_CPP, "cpp", [TestCase(f"{mode} {honest} {size} {reps}\n", None)], lim,
                              repeats=5 if clock == "cpu" else 1, clock=clock)
                    t = sb.run_job(job).tests[0]
                    vals.append({"cpu": t.cpu_time_s, "instructions": t.instructions, "cycles": t.cycles}[clock])
                print(f"{name:<10} {clock:<13} {vals[0]:>14.6g} {vals[1]:>14.6g} {vals[1] / vals[0]:>14.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5, help="runs of the micro-benchmark (medians)")
    ap.add_argument("--pairs", action="store_true", help="also the priced attacks beside their honest twins")
    a = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}")
    ns = measure(a.repeats)
    for k, v in ns.items():
        print(f"{k:<15} {v:9.3f} ns  ({v / (ns['plain'] / 4):8.1f} plain adds)")
    weights, fault_pages = prices(ns)
    print(f"INSTRUCTION_WEIGHTS = {weights}\nFAULT_PAGES = {fault_pages}")
    if a.pairs:
        pairs()


if __name__ == "__main__":
    main()
