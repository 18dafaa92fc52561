"""What shipping a package as one file costs (``sandbox/shipping.py``), against the single files it
replaced (``sandbox/runner.py``, ``kernelenv/guest.py`` at ``--before``), old and new interleaved in
one run, each ratio new/old with a 95% interval (the median of the paired ratios, sign-test ranks):

(a) the runner's start-up alone: ``python3 -I -S RUNNER spec`` on a one-test job (``/bin/true``);
(b) per job through the sandbox: one trivial C++ test, the old or the new runner file mounted;
(c) the kernel guest's load in the box's interpreter (``/usr/bin/python3 -B``; its modules'
    bodies, the host-shared sources bound as the old guest did; no torch, no job), timed inside;
(d) the host's side of a kernel Scorer's start-up: the guest's text built (bundle, uncached) vs
    the three files read.

    .venv/bin/python benchmarks/shipping_bench.py [--before REV] [--n 40] [--jobs 40]
"""
from __future__ import annotations

import argparse
import marshal
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from perfalign.kernelenv.score import GUEST  # noqa: E402
from perfalign.sandbox import Limits, Sandbox, TestCase  # noqa: E402
from perfalign.sandbox.backends import bwrap  # noqa: E402
from perfalign.sandbox.backends.base import RUNNER_PACKAGE  # noqa: E402
from perfalign.sandbox.shipping import bundle, module_file  # noqa: E402

TRIVIAL_CPP = "#include <cstdio>\nint main(){ int a, b; if (scanf(\"%d %d\", &a, &b) == 2) printf(\"%d\\n\", a + b); }"
PYTHON = "/usr/bin/python3"
# the old guest bound kernelenv/sizes.py and exec'd measure/timing_stats.py, sent as source
OLD_GUEST_LOAD = """
import sys, time, types
t0 = time.perf_counter()
g = {"__name__": "probe"}
exec(compile(open(sys.argv[1]).read(), "guest.py", "exec"), g)
g["_bind_sizes"](open(sys.argv[2]).read())
g["_load_stats"](open(sys.argv[3]).read())
print(time.perf_counter() - t0)
"""
NEW_GUEST_LOAD = """
import sys, time
t0 = time.perf_counter()
exec(compile(open(sys.argv[1]).read(), "main.py", "exec"), {"__name__": "probe"})
print(time.perf_counter() - t0)
"""


def before_rev() -> str:
    """The commit before the one that removed sandbox/runner.py."""
    out = subprocess.run(["git", "log", "-1", "--format=%H", "--diff-filter=D", "--", "sandbox/runner.py"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    if not out:
        sys.exit("sandbox/runner.py was never removed here: pass --before REV")
    return out + "^"


def git_file(rev: str, path: str, into: Path) -> Path:
    data = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, check=True).stdout
    into.write_bytes(data)
    into.chmod(0o644)
    return into


def ratio_ci(old: list[float], new: list[float]) -> str:
    """new/old: the median of the paired ratios and its 95% interval (sign-test order statistics)."""
    r = sorted(b / a for a, b in zip(old, new))
    n = len(r)
    k = max(0, math.floor(n / 2 - 0.98 * math.sqrt(n)))
    return (f"old {statistics.median(old) * 1e3:8.2f} ms  new {statistics.median(new) * 1e3:8.2f} ms  "
            f"new/old {statistics.median(r):.3f} [{r[k]:.3f}, {r[n - 1 - k]:.3f}] (n={n})")


def timed(argv: list[str], **kw) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, **kw)
    return time.perf_counter() - t0


def alternate(n: int, old, new) -> tuple[list[float], list[float]]:
    """``n`` pairs, the order flipped every pair (neither side always runs first)."""
    a, b = [], []
    for i in range(n):
        if i % 2:
            b.append(new())
            a.append(old())
        else:
            a.append(old())
            b.append(new())
    return a, b


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", default=None, help="the revision holding the single files (default: found)")
    ap.add_argument("--n", type=int, default=40, help="pairs for (a), (c), (d)")
    ap.add_argument("--jobs", type=int, default=40, help="pairs of sandboxed jobs for (b)")
    args = ap.parse_args()
    rev = args.before or before_rev()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        tmp.chmod(0o755)
        old_runner = git_file(rev, "sandbox/runner.py", tmp / "runner_old.py")
        new_runner = tmp / "runner_new.py"
        new_runner.write_text(bundle(RUNNER_PACKAGE))
        spec = tmp / "job.marshal"
        spec.write_bytes(marshal.dumps({"argv": ["/bin/true"], "tests": [None], "limits": {"wall_s": 10, "cpu_s": 5},
                                        "hard_limits": False, "output_dir": str(tmp), "max_output_bytes": 100}))
        print(f"before: {rev}; runner {old_runner.stat().st_size} -> {new_runner.stat().st_size} bytes")
        old, new = alternate(args.n, lambda: timed([PYTHON, "-I", "-S", str(old_runner), str(spec)]),
                             lambda: timed([PYTHON, "-I", "-S", str(new_runner), str(spec)]))
        print(f"(a) runner start-up + one test, no sandbox: {ratio_ci(old, new)}")

        from perfalign.sandbox.backends.base import runner_path

        with Sandbox(backend="bwrap", workers=1) as sb:
            # the old file where the sandbox's uids read the new one: under the cache root
            old_mounted = git_file(rev, "sandbox/runner.py", runner_path().with_name("runner-before.py"))
            new_mounted = runner_path()
            test = [TestCase("1 2\n", "3")]
            sb.run(TRIVIAL_CPP, "cpp", test)  # the compile cache

            def job(path: Path):
                def run() -> float:
                    bwrap.runner_path = lambda: path
                    t0 = time.perf_counter()
                    r = sb.run(TRIVIAL_CPP, "cpp", test, Limits(time_s=2))
                    assert r.ok, r.verdict
                    return time.perf_counter() - t0
                return run
            old, new = alternate(args.jobs, job(old_mounted), job(new_mounted))
            bwrap.runner_path = runner_path
            print(f"(b) one job of one test through bwrap:      {ratio_ci(old, new)}")

        old_guest = git_file(rev, "kernelenv/guest.py", tmp / "guest_old.py")
        sizes = git_file(rev, "kernelenv/sizes.py", tmp / "sizes_old.py")
        stats = git_file(rev, "measure/timing_stats.py", tmp / "stats_old.py")
        new_guest = tmp / "guest_new.py"
        new_guest.write_text(bundle(*GUEST))

        def inside(argv: list[str]) -> float:
            return float(subprocess.run(argv, check=True, capture_output=True, text=True).stdout)
        old, new = alternate(args.n, lambda: inside([PYTHON, "-B", "-c", OLD_GUEST_LOAD, str(old_guest), str(sizes),
                                                     str(stats)]),
                             lambda: inside([PYTHON, "-B", "-c", NEW_GUEST_LOAD, str(new_guest)]))
        print(f"(c) kernel guest's load in the box's python: {ratio_ci(old, new)}")

        def build_old() -> float:
            t0 = time.perf_counter()
            for f in (old_guest, sizes, stats):
                f.read_text()
            return time.perf_counter() - t0

        def build_new() -> float:
            bundle.cache_clear()
            t0 = time.perf_counter()
            bundle(*GUEST)
            return time.perf_counter() - t0
        old, new = alternate(args.n, build_old, build_new)
        print(f"(d) the guest's text on the host (Scorer):   {ratio_ci(old, new)}")
        print(f"    per-test input no longer carries sizes.py + timing_stats.py: "
              f"{len(sizes.read_bytes()) + len(stats.read_bytes())} bytes; shipped modules: "
              f"{', '.join(p.stem for p in sorted(module_file(GUEST[0]).parent.glob('*.py')))}")


if __name__ == "__main__":
    main()
