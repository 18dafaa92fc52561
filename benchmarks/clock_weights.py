"""The prices of the counted clocks' costly work, measured natively on this machine
(sandbox/clock.py INSTRUCTION_WEIGHTS and FAULT_PAGES; docs/sandbox.md, "Priced work").

Each costly operation runs in a dependent chain (its latency: the next one waits for it), beside
plain integer adds in four independent chains in the same process (ordinary code's throughput,
several instructions a cycle): the weight is ns per operation over ns per plain add, i.e. how many
ordinary instructions the operation costs in time (a floating divide, `divsd`, is printed beside
the integer one: 0.93x it here, so one weight prices both). A page fault (first write to a
fresh anonymous page, zero-fill) is priced the same way, in pages of 4096 plain instructions, the
C library's page write under the count, rounded up, and at least 2 (a fault must never cost the
count less than the page of memset it replaces, natively several times cheaper: the "memset_page"
line). A byte a fast string moves (`rep movsb` between two 16 KB buffers: within L1) is priced in
bytes per plain add (COPY_BYTES), and a fast string's start-up (`rep movsb` of 8 bytes, REP_START).
A miss in a stream (the cycles model's L1_stream and LL_stream) is priced from the same copy through
buffers in L2 (2 x 512 KB) and beyond the model's LL (2 x 32 MB): the ns a line adds over the copy
within L1, over the two misses it takes (read and write), in plain adds; a sequential read of one
word a line and a pointer chase over the same sizes are printed beside them (a chase's line is a
miss no prefetcher hides). A byte the kernel moves (KERNEL_BYTES): 64 KB written into a pipe and
read back, per byte counted (each counts twice: read by the write, filled by the read). With
--pairs, also the five priced attacks of tests/sandbox/test_clock_priced.py
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
#include <unistd.h>
static double now(void){
  struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&t); return t.tv_sec+t.tv_nsec*1e-9; }
static void movsb(void* d, const void* s, long n){ __asm__ volatile("rep movsb":"+D"(d),"+S"(s),"+c"(n)::"memory"); }
static double copy_ns(char* a, char* b, long sz, long total){  /* ns a byte, copied back and forth */
  long reps=total/sz; double t0=now();
  for(long r=0;r<reps;r++){ if(r&1) movsb(a,b,sz); else movsb(b,a,sz); } return (now()-t0)/((double)reps*sz)*1e9; }
static double seq_ns(char* p, long sz, long total){  /* ns a line: one word of each line, in order */
  long reps=total/sz; unsigned long s=0; double t0=now();
  for(long r=0;r<reps;r++) for(long i=0;i<sz;i+=64) s+=*(volatile unsigned long*)(p+i);
  return (now()-t0)/((double)reps*(sz/64))*1e9+(s==1?1:0); }
static double chase_ns(char* p, long sz, long steps){  /* ns a line: a random cycle through the lines */
  long n=sz/64; long* perm=(long*)malloc(n*sizeof(long)); unsigned long r=88172645463325252ul;
  for(long i=0;i<n;i++) perm[i]=i;
  for(long i=n-1;i>0;i--){ r^=r<<13; r^=r>>7; r^=r<<17;
    long j=(long)(r%(unsigned long)(i+1)); long t=perm[i]; perm[i]=perm[j]; perm[j]=t; }
  for(long i=0;i<n;i++) *(long*)(p+perm[i]*64)=perm[(i+1)%n]*64;
  long k=0; double t0=now(); for(long s=0;s<steps;s++) k=*(long*)(p+k);
  free(perm); return (now()-t0)/steps*1e9+(k==-1?1:0); }
#define TIME(name, n, init, body) { init; double t0=now(); for(long i=0;i<(n);i++){ body; } \
  printf("%s %.4f\n", name, (now()-t0)/(n)*1e9); }
int main(void){
  long n=10000000;
  TIME("plain", n, unsigned long a=1; unsigned long b=1; unsigned long c=1; unsigned long e=1,
       __asm__ volatile("add %0,%0\n\tadd %1,%1\n\tadd %2,%2\n\tadd %3,%3":"+r"(a),"+r"(b),"+r"(c),"+r"(e)))
  TIME("transcendental", n/10, double x=0.5, __asm__ volatile("fsin":"+t"(x)))
  TIME("div", n, unsigned long a=~0ul; unsigned long d=0,
       d=0; __asm__ volatile("divq %2":"+a"(a),"+d"(d):"r"(3ul)); a|=1ul<<63)
  TIME("fdiv", n, double x=1e300; double y=1.0000001, __asm__ volatile("divsd %1,%0":"+x"(x):"x"(y)))
  TIME("sqrt", n, double x=2.0, __asm__ volatile("sqrtsd %0,%0":"+x"(x)))
  long sz=32<<20, pages=sz/4096; double tf=0;
  for(int r=0;r<4;r++){ char* p=(char*)mmap(0,sz,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
    double t0=now(); for(long i=0;i<sz;i+=4096) p[i]=1; tf+=now()-t0; munmap(p,sz); }
  printf("fault %.4f\n", tf/(4*pages)*1e9);
  char* q=(char*)malloc(4<<20); for(long i=0;i<(4<<20);i++) q[i]=1;
  TIME("memset_page", 2000, (void)0, memset(q+(i%1024)*4096,(int)i,4096); __asm__ volatile("":::"memory"))
  long big=64<<20; char* x=(char*)malloc(big); char* y=(char*)malloc(big); memset(x,1,big); memset(y,2,big);
  printf("movsb_byte %.6f\n", copy_ns(x,y,16384,1L<<32));
  TIME("rep_start", n, (void)0, movsb(x+(i&63)*8,y,8))
  printf("stream_l2_line %.4f\n", 64*copy_ns(x,y,512<<10,1L<<30));
  printf("stream_mem_line %.4f\n", 64*copy_ns(x,y,32<<20,1L<<29));
  printf("seq_l2_line %.4f\nseq_mem_line %.4f\n", seq_ns(x,1<<20,1L<<31), seq_ns(x,big,1L<<30));
  { int fd[2]; if(pipe(fd)) return 1; long sz=65536, reps=(1L<<30)/sz; double t0=now();
    for(long r=0;r<reps;r++){ long o=(r*sz)%(256<<10);
      if(write(fd[1],x+o,sz)!=sz || read(fd[0],y+o,sz)!=sz) return 2; }
    printf("kernel_byte %.6f\n", (now()-t0)/((double)reps*sz)/2*1e9); }
  printf("chase_l1_line %.4f\nchase_l2_line %.4f\nchase_mem_line %.4f\n",
         chase_ns(x,16<<10,n), chase_ns(x,1<<20,n), chase_ns(x,big,n/4));
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


def prices(ns: dict[str, float]) -> dict:
    """The prices in sandbox/clock.py from the measured ns per operation."""
    plain = ns["plain"] / 4  # four independent adds per iteration: ordinary code's throughput
    in_l1 = 64 * ns["movsb_byte"]  # a line copied within L1
    return {"INSTRUCTION_WEIGHTS": {k: max(1, round(ns[k] / plain)) for k in ("transcendental", "div", "sqrt")},
            "FAULT_PAGES": max(2, math.ceil(ns["fault"] / plain / 4096)),
            "COPY_BYTES": max(1, round(plain / ns["movsb_byte"])), "REP_START": max(1, round(ns["rep_start"] / plain)),
            "KERNEL_BYTES": max(1, round(plain / ns["kernel_byte"])),
            "STREAM_L1": max(1, round((ns["stream_l2_line"] - in_l1) / 2 / plain)),
            "STREAM_LL": max(1, round((ns["stream_mem_line"] - ns["stream_l2_line"]) / 2 / plain))}


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
    for k, v in prices(ns).items():
        print(f"{k} = {v}")
    if a.pairs:
        pairs()


if __name__ == "__main__":
    main()
