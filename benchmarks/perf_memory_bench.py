"""Peak memory of a CodeContests-Perf build on real-schema problems with large tests
(real rows hold hundreds of generated tests with multi-MB inputs).

Generates deepmind/code_contests-schema Parquet: each problem has ``--tests`` tests (2 public,
10 private, the rest generated) of ~``--input-mb`` MB of numbers each, a C++ and a Python 3
solution labelled correct and one labelled incorrect. Then builds 1 problem and N problems,
each in a fresh process, and prints the builder's peak RSS (ru_maxrss of the building process:
the measured programs are other processes) side by side. Target: flat in the number of
problems (memory bounded by one problem, not by the dataset).

    .venv/bin/python benchmarks/perf_memory_bench.py [--problems 1 4] [--tests 200] [--input-mb 5]
        [--row-group-rows 1] [--flow] [--builder-root DIR]

``--builder-root DIR`` builds with the ``perfdata`` package found in DIR instead (e.g. an older
version: ``git archive REV perfdata | tar -x -C DIR``), for a before/after comparison.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CPP = r"""#include <cstdio>
int main() {  // count whitespace-separated tokens of stdin
    static char buf[1 << 16]; long long n = 0; bool in = false; size_t k;
    while ((k = fread(buf, 1, sizeof buf, stdin)) > 0)
        for (size_t i = 0; i < k; i++) { bool ws = buf[i] == ' ' || buf[i] == '\n'; if (!ws && !in) n++; in = !ws; }
    printf("%lld\n", n);
}
"""
PY = "import sys\nprint(len(sys.stdin.buffer.read().split()))\n"
WRONG = "print(0)\n"


def _test_input(rng, mb: float) -> tuple[str, str]:
    """~mb MB of 9-digit numbers, 100 per line; the answer is how many there are."""
    import numpy as np

    per_line = 100
    lines = max(1, int(mb * 1e6 / (per_line * 10)))
    digits = rng.integers(ord("0"), ord("9") + 1, size=(lines, per_line, 10), dtype=np.uint8)
    digits[:, :, 9] = ord(" ")
    digits[:, -1, 9] = ord("\n")
    return digits.tobytes().decode("ascii"), f"{lines * per_line}\n"


def _tests_slice(ins: tuple[str, ...], outs: tuple[str, ...], a: int, b: int) -> dict[str, list[str]]:
    """Tests ``a:b`` in the CodeContests column layout."""
    return {"input": list(ins[a:b]), "output": list(outs[a:b])}


def generate(path: Path, problems: int, tests: int, input_mb: float, row_group_rows: int, plain: bool = False) -> None:
    """A CodeContests-schema Parquet file, written one problem at a time (bounded memory), with
    pyarrow's default encoding (dictionary first, as `datasets` writes), or ``plain``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    tests_t = pa.struct([("input", pa.list_(pa.string())), ("output", pa.list_(pa.string()))])
    sols_t = pa.struct([("language", pa.list_(pa.int64())), ("solution", pa.list_(pa.string()))])
    schema = pa.schema([("name", pa.string()), ("description", pa.string()), ("public_tests", tests_t),
                        ("private_tests", tests_t), ("generated_tests", tests_t), ("source", pa.int64()),
                        ("difficulty", pa.int64()), ("solutions", sols_t), ("incorrect_solutions", sols_t),
                        ("cf_tags", pa.list_(pa.string())),
                        ("time_limit", pa.struct([("seconds", pa.int64()), ("nanos", pa.int64())])),
                        ("memory_limit_bytes", pa.int64())])
    rng = np.random.default_rng(0)
    with pq.ParquetWriter(path, schema, compression="zstd", use_dictionary=not plain) as w:
        rows = []
        for p in range(problems):
            ins, outs = zip(*(_test_input(rng, input_mb if i >= 2 else 0.001) for i in range(tests)))
            rows.append({"name": f"{1000 + p}_A. Count Numbers {p}", "description": "Count the numbers of the input.",
                         "public_tests": _tests_slice(ins, outs, 0, 2),
                         "private_tests": _tests_slice(ins, outs, 2, 12),
                         "generated_tests": _tests_slice(ins, outs, 12, tests),
                         "source": 2, "difficulty": 7,
                         "solutions": {"language": [2, 3], "solution": [CPP + f"// {p}\n", PY + f"# {p}\n"]},
                         "incorrect_solutions": {"language": [3], "solution": [WRONG]},
                         "cf_tags": ["implementation"], "time_limit": {"seconds": 2, "nanos": 0},
                         "memory_limit_bytes": 256 << 20})
            if len(rows) >= row_group_rows:
                w.write_table(pa.Table.from_pylist(rows, schema=schema), row_group_size=row_group_rows)
                rows = []
            del ins, outs
        if rows:
            w.write_table(pa.Table.from_pylist(rows, schema=schema), row_group_size=row_group_rows)


def _child(args: argparse.Namespace) -> None:
    """Runs in a fresh process: build, then report this process's peak RSS."""
    import resource

    if args.builder_root:
        sys.path.insert(0, args.builder_root)
    t0 = time.perf_counter()
    if args.flow:
        from perfalign.config.tables import PerfSettings
        from perfalign.flows.perf import run_build

        status = run_build(args.out, PerfSettings(source=args.source, repeats=1), workers=args.workers)["status"]
    else:
        from perfalign.perfdata.perf import BuildSettings
        from perfalign.perfdata.perf_build import build

        status = build(args.source, Path(args.out), BuildSettings(repeats=1), workers=args.workers).status
    print(json.dumps({"peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "seconds": time.perf_counter() - t0, "status": status}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", type=int, nargs="+", default=[1, 4])
    ap.add_argument("--tests", type=int, default=200)
    ap.add_argument("--input-mb", type=float, default=5.0)
    ap.add_argument("--row-group-rows", type=int, default=1, help="problems per Parquet row group in the source")
    ap.add_argument("--plain-source", action="store_true",
                    help="write the source without dictionary encoding (pyarrow decodes it with less memory)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--flow", action="store_true", help="build through the Prefect flow (the CLI's path)")
    ap.add_argument("--builder-root", default=None, help="import perfdata from this folder instead")
    ap.add_argument("--keep", default=None, help="generate into (and keep) this folder")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--generate", help=argparse.SUPPRESS)
    ap.add_argument("--source", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return _child(args)
    if args.generate:
        return generate(Path(args.generate), args.problems[0], args.tests, args.input_mb, args.row_group_rows,
                        args.plain_source)

    work = Path(args.keep or tempfile.mkdtemp(prefix="perf-memory-"))
    results = []
    for n in args.problems:
        tag = f"{n}-{args.tests}x{args.input_mb:g}-rg{args.row_group_rows}{'-plain' if args.plain_source else ''}"
        src = work / f"src{tag}" / "train-00000-of-00001.parquet"
        if not src.exists():
            src.parent.mkdir(parents=True, exist_ok=True)
            t0 = time.perf_counter()
            # in a child process: the generator's memory must not sit beside the measured builds
            subprocess.run([sys.executable, __file__, "--generate", str(src), "--problems", str(n), "--tests",
                            str(args.tests), "--input-mb", str(args.input_mb), "--row-group-rows",
                            str(args.row_group_rows)] + (["--plain-source"] if args.plain_source else []),
                           cwd=ROOT, check=True)
            print(f"generated {n} problem(s): {src.stat().st_size / 1e6:,.0f} MB on disk "
                  f"in {time.perf_counter() - t0:.0f} s",
                  flush=True)
        out = work / f"out{tag}"
        shutil.rmtree(out, ignore_errors=True)
        cmd = [sys.executable, __file__, "--child", "--source", str(src.parent), "--out", str(out),
               "--workers", str(args.workers)] + (["--flow"] if args.flow else []) + \
              (["--builder-root", args.builder_root] if args.builder_root else [])
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=dict(os.environ, HF_HUB_OFFLINE="1"))
        if done.returncode:
            sys.exit(f"build of {n} problem(s) failed:\n{done.stderr[-3000:]}")
        r = json.loads(done.stdout.strip().splitlines()[-1])
        results.append((n, r))
        print(f"built {n} problem(s): peak RSS {r['peak_rss_mb']:,.0f} MB, {r['seconds']:.0f} s, {r['status']}",
              flush=True)
    raw_gb = args.tests * args.input_mb / 1000  # GB of test input per problem
    print(f"\n{args.tests} tests x ~{args.input_mb:g} MB input per problem (~{raw_gb:.2f} GB of test input each), "
          f"{args.row_group_rows} problem(s) per source row group, "
          f"{'plain' if args.plain_source else 'default (dictionary)'} source encoding, "
          f"{'Prefect flow' if args.flow else 'perfalign.perfdata.perf_build.build'}, "
          f"builder: {args.builder_root or 'this tree'}")
    print("problems | builder peak RSS | wall")
    for n, r in results:
        print(f"{n:8d} | {r['peak_rss_mb']:13,.0f} MB | {r['seconds']:5.0f} s")
    if len(results) > 1:
        (n0, a), (n1, b) = results[0], results[-1]
        print(f"peak RSS ratio {n1} vs {n0} problem(s): {b['peak_rss_mb'] / a['peak_rss_mb']:.2f}x "
              f"(flat = 1.00x; proportional would be {n1 / n0:.2f}x)")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
