"""Per-run cost of perfalign's sandbox against isolate (the IOI/CMS sandbox), side by side.

Same C++ programs, compiled once with the sandbox's own g++ flags, measured three ways and
interleaved round by round (a/b/c, a/b/c, ...) so the machine's noise is shared:
  (a) isolate: one box initialised once with --cg and reused, one `isolate --run` per test,
      limits like perfalign's defaults (CPU time, wall guard, cgroup memory, processes, file size),
      CPU time read from isolate's meta file (cgroup cpuacct, 1 ms resolution);
  (b) perfalign: Sandbox(backend="bwrap"), the same tests as one submission (compile cache warm),
      CPU time from RunResult.tests[i].cpu_time_s;
  (c) raw fork/exec from Python (subprocess.run), no isolation.
Prints ms/run for each, the ratio isolate/perfalign (the target: >= 3x) and the CPU-time CV of
a ~35 ms program under isolate, perfalign and raw (rusage).

    .venv/bin/python benchmarks/isolate_compare.py [--runs 300] [--rounds 3] [--box-id 37]

isolate is not vendored: build it separately (docs/results.md, "Sandbox"). Without `isolate`
on PATH the script says so and exits 0.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from sandbox_bench import TRIVIAL_CPP, WORK_CPP, cv  # noqa: E402

from perfalign.sandbox import Limits, Sandbox, TestCase  # noqa: E402
from perfalign.sandbox.toolchains import CPP_FLAGS  # noqa: E402

HOW_TO_BUILD = ("isolate not found on PATH; nothing compared. Build isolate 1.x (cgroup v1) from "
                "ioi/isolate: apt-get install libcap-dev; make isolate; install -m 4755 isolate "
                "/usr/local/bin/; write /usr/local/etc/isolate (box_root, cg_root = /sys/fs/cgroup, "
                "first_uid, first_gid, num_boxes) -- see docs/results.md, 'Sandbox'.")
LIMITS = Limits()  # perfalign's defaults; isolate gets the same numbers below


def compile_cpp(src: str, out: Path) -> Path:
    subprocess.run(["g++", *CPP_FLAGS, "-x", "c++", "-", "-o", str(out)], input=src.encode(), check=True)
    return out


class IsolateBox:
    """One isolate box, initialised once (--cg) and reused for every run."""

    def __init__(self, box_id: int):
        self.base = ["isolate", "--cg", f"--box-id={box_id}"]
        subprocess.run([*self.base, "--cleanup"], capture_output=True)  # leftovers of an aborted run
        init = subprocess.run([*self.base, "--init"], capture_output=True, text=True)
        if init.returncode != 0:
            raise SystemExit(f"isolate --cg --init failed: {init.stderr.strip()}")
        self.box = Path(init.stdout.strip()) / "box"
        self.meta = Path(tempfile.mkdtemp(prefix="isolate-meta-")) / "meta"
        self.limit_args = [
            f"--time={LIMITS.time_s}", f"--wall-time={LIMITS.wall_guard}",
            f"--cg-mem={LIMITS.memory_mb * 1024}", f"--processes={LIMITS.processes}",
            f"--fsize={LIMITS.output_mb * 1024}", f"--meta={self.meta}",
        ]

    def install(self, exe: Path, name: str, stdin: str = "") -> None:
        shutil.copy(exe, self.box / name)
        (self.box / f"{name}.in").write_text(stdin)

    def run(self, name: str) -> tuple[float, str]:
        """Run ./name once; return (CPU seconds from the meta file, stdout)."""
        r = subprocess.run([*self.base, *self.limit_args, "--silent", f"--stdin={name}.in",
                            f"--stdout={name}.out", "--run", "--", f"./{name}"], capture_output=True, text=True)
        meta = dict(line.split(":", 1) for line in self.meta.read_text().splitlines() if ":" in line)
        if r.returncode != 0:
            raise SystemExit(f"isolate run failed ({meta.get('status')}): {meta.get('message')} {r.stderr.strip()}")
        return float(meta["time"]), (self.box / f"{name}.out").read_text()

    def close(self) -> None:
        subprocess.run([*self.base, "--cleanup"], capture_output=True)
        shutil.rmtree(self.meta.parent, ignore_errors=True)


def isolate_ms(box: IsolateBox, n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        _, out = box.run("trivial")
        assert out.strip() == "3", out
    return (time.perf_counter() - t0) * 1000 / n


def perfalign_ms(sb: Sandbox, n: int) -> float:
    t0 = time.perf_counter()
    r = sb.run(TRIVIAL_CPP, "cpp", [TestCase("1 2\n", "3")] * n)
    dt = time.perf_counter() - t0
    assert r.ok and len(r.tests) == n, r.verdict
    return dt * 1000 / n


def raw_ms(exe: Path, n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        out = subprocess.run([str(exe)], input=b"1 2\n", capture_output=True, check=True).stdout
        assert out.strip() == b"3", out
    return (time.perf_counter() - t0) * 1000 / n


def raw_cpu_s(exe: Path) -> float:
    """user+sys of one child from rusage (the raw baseline for the CPU-time CV)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([str(exe)], stdout=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=300, help="runs (tests) per measurement")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved a/b/c rounds")
    ap.add_argument("--cv-runs", type=int, default=30, help="runs of the ~35 ms program per sandbox")
    ap.add_argument("--box-id", type=int, default=37)
    args = ap.parse_args()
    if shutil.which("isolate") is None:
        print(HOW_TO_BUILD)
        return
    version = subprocess.run(["isolate", "--version"], capture_output=True, text=True).stdout.splitlines()
    sb = Sandbox(backend="bwrap", calibrate=False)
    box = IsolateBox(args.box_id)
    try:
        with tempfile.TemporaryDirectory() as d:
            trivial = compile_cpp(TRIVIAL_CPP, Path(d) / "trivial")
            work = compile_cpp(WORK_CPP, Path(d) / "work")
            box.install(trivial, "trivial", "1 2\n")
            box.install(work, "work")
            sb.run(TRIVIAL_CPP, "cpp", [TestCase("1 2\n", "3")])  # warm the compile caches
            sb.run(WORK_CPP, "cpp", [TestCase()], Limits(time_s=10))
            print(f"{version[0] if version else 'isolate'} | perfalign backend {sb.name} | cpus {os.cpu_count()}"
                  f" | {args.runs} runs x {args.rounds} interleaved rounds")
            rows: dict[str, list[float]] = {"isolate": [], "perfalign": [], "raw": []}
            for i in range(args.rounds):
                rows["isolate"].append(isolate_ms(box, args.runs))
                rows["perfalign"].append(perfalign_ms(sb, args.runs))
                rows["raw"].append(raw_ms(trivial, args.runs))
                print(f"  round {i + 1}: " + "  ".join(f"{k} {v[-1]:.2f} ms/run" for k, v in rows.items()))
            med = {k: statistics.median(v) for k, v in rows.items()}
            ratio = med["isolate"] / med["perfalign"]
            print(f"(a) trivial C++, median of rounds: isolate {med['isolate']:.2f} ms/run | perfalign "
                  f"{med['perfalign']:.2f} ms/run | raw fork/exec {med['raw']:.2f} ms/run")
            print(f"    isolate/perfalign {ratio:.2f}x (target >= 3x: {'met' if ratio >= 3 else 'NOT met'})"
                  f" | perfalign/raw {med['perfalign'] / med['raw']:.2f}x")
            # CPU-time stability of the ~35 ms program, interleaved in chunks of 10.
            cpu: dict[str, list[float]] = {"isolate": [], "perfalign": [], "raw": []}
            chunk = 10
            for _ in range(max(1, args.cv_runs // chunk)):
                cpu["isolate"] += [box.run("work")[0] for _ in range(chunk)]
                res = sb.run(WORK_CPP, "cpp", [TestCase()], Limits(time_s=10), repeats=chunk)
                assert res.ok, res.verdict
                cpu["perfalign"] += res.tests[0].cpu_times_s
                cpu["raw"] += [raw_cpu_s(work) for _ in range(chunk)]
            print(f"(b) ~{statistics.median(cpu['perfalign']) * 1000:.0f} ms C++ program, {len(cpu['raw'])} runs each, "
                  "CPU-time CV: " + " | ".join(f"{k} {cv(v):.2%} (median {statistics.median(v) * 1000:.1f} ms)"
                                              for k, v in cpu.items()))
            print("    (isolate's meta time has 1 ms resolution; perfalign: cgroup CPU time; raw: rusage)")
    finally:
        box.close()
        sb.close()


if __name__ == "__main__":
    main()
