"""KernelBench level 1 on a GPU: eager PyTorch vs torch.compile (Inductor) vs this project's Triton
oracles (kernelenv/oracles/triton/level1), at the problems' published sizes, on one CUDA device.

    python benchmarks/kernel_gpu_bench.py --kernelbench ../shared/external/kernelbench/level1 \
        [--every 10] [--rounds 7] [--deadline 240] [--json out.json]

What it measures: each variant's time per call with CUDA events, in interleaved rounds (a fresh
random order of the variants every round, each timing a block of calls of about --block-ms), the
median over rounds, and the spread (median absolute deviation / median). Speedups are ratios of
medians from the same rounds. Each variant's output is checked against eager (allclose) first;
a wrong variant is reported, not timed.

What it does not do: this runs our own trusted kernels outside the sandbox (the sandbox passes no
GPU through yet, docs/kernels.md), so it is a measurement of the oracles and of the Inductor
baseline on a real GPU, not a reward path for untrusted candidates.
"""
from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import math
import random
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
ORACLES = ROOT / "kernelenv" / "oracles" / "triton" / "level1"


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def block_ms(fn, inputs, calls: int) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn(*inputs)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / calls


def bench_problem(path: Path, args) -> dict:
    ref = load(path, "ref_" + path.stem)
    init = ref.get_init_inputs()
    torch.manual_seed(0)
    with torch.device("cuda"):
        inputs = ref.get_inputs()
    inputs = [x.cuda() if torch.is_tensor(x) else x for x in inputs]
    eager = ref.Model(*init).cuda().eval()
    variants = {"eager": eager}
    out: dict = {"problem": path.stem, "shapes": [list(x.shape) for x in inputs if torch.is_tensor(x)]}
    t0 = time.perf_counter()
    variants["compile"] = torch.compile(copy.deepcopy(eager))
    oracle = ORACLES / path.name
    if oracle.exists():
        variants["triton"] = load(oracle, "oracle_" + path.stem).ModelNew(*init).cuda().eval()
    with torch.no_grad():
        expected = eager(*inputs)
        for name, fn in list(variants.items())[1:]:
            t = time.perf_counter()
            got = fn(*inputs)  # first call: Inductor / Triton compile
            torch.cuda.synchronize()
            out[f"{name}_first_call_s"] = round(time.perf_counter() - t, 2)
            ok = torch.allclose(got.float(), expected.float(), atol=args.atol, rtol=args.rtol)
            out[f"{name}_correct"] = bool(ok)
            if not ok:
                out[f"{name}_max_abs_err"] = float((got.float() - expected.float()).abs().max())
                del variants[name]
            del got
        del expected
        probe = block_ms(eager, inputs, 1)
        calls = max(1, min(1000, math.ceil(args.block_ms / max(probe, 1e-3))))
        times: dict[str, list[float]] = {n: [] for n in variants}
        for _ in range(args.rounds):
            for name in random.sample(list(variants), len(variants)):
                times[name].append(block_ms(variants[name], inputs, calls))
    med = {n: statistics.median(v) for n, v in times.items()}
    out.update({"calls_per_block": calls, "rounds": args.rounds,
                "ms": {n: round(m, 4) for n, m in med.items()},
                "spread": {n: round(statistics.median(abs(x - med[n]) for x in v) / med[n], 4)
                           for n, v in times.items()},
                "speedup_vs_eager": {n: round(med["eager"] / m, 3) for n, m in med.items() if n != "eager"},
                "seconds": round(time.perf_counter() - t0, 1)})
    if "triton" in med and "compile" in med:
        out["triton_vs_compile"] = round(med["compile"] / med["triton"], 3)
    del variants, eager, inputs
    torch.cuda.empty_cache()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernelbench", type=Path, default=ROOT.parent / "shared" / "external" / "kernelbench" / "level1")
    ap.add_argument("--every", type=int, default=0, help="also every Nth level-1 problem without an oracle (0: none)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--block-ms", type=float, default=20.0)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--deadline", type=float, default=0, help="start no problem after this many seconds (0: none)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("kernel_gpu_bench: no CUDA device here; this benchmark needs a GPU", file=sys.stderr)
        return 2
    problems = sorted(args.kernelbench.glob("*.py"), key=lambda p: int(p.stem.split("_")[0]))
    chosen = [p for p in problems if (ORACLES / p.name).exists()]
    if args.every:
        chosen += [p for i, p in enumerate(problems) if i % args.every == 0 and p not in chosen]
    report = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
              "triton": __import__("triton").__version__, "results": [], "errors": []}
    t_start = time.perf_counter()
    print(f"{report['device']}, torch {report['torch']}, triton {report['triton']}: {len(chosen)} problems", flush=True)
    for p in chosen:
        if args.deadline and time.perf_counter() - t_start > args.deadline:
            report["errors"].append({"problem": p.stem, "error": "not started: deadline"})
            continue
        try:
            r = bench_problem(p, args)
        except Exception as e:  # a problem that does not fit or fails to compile is reported, not fatal
            torch.cuda.empty_cache()
            report["errors"].append({"problem": p.stem, "error": f"{type(e).__name__}: {str(e)[:300]}"})
            print(f"{p.stem:45s} ERROR {type(e).__name__}: {str(e)[:200]}", flush=True)
            continue
        report["results"].append(r)
        sp = r["speedup_vs_eager"]
        print(f"{p.stem:45s} eager {r['ms']['eager']:9.4f} ms  compile x{sp.get('compile', float('nan')):6.3f}  "
              f"triton x{sp.get('triton', float('nan')):6.3f}  spread {max(r['spread'].values()):.3f}  "
              f"{r['seconds']:5.1f}s", flush=True)
        if args.json:
            args.json.write_text(json.dumps(report, indent=1))
    tri = [r["speedup_vs_eager"]["triton"] for r in report["results"] if "triton" in r["speedup_vs_eager"]]
    comp = [r["speedup_vs_eager"]["compile"] for r in report["results"] if "compile" in r["speedup_vs_eager"]]
    geo = lambda xs: round(math.exp(statistics.fmean(math.log(x) for x in xs)), 3) if xs else None  # noqa: E731
    report["geomean_speedup_vs_eager"] = {"triton": geo(tri), "compile": geo(comp)}
    print(f"geomean speedup vs eager: triton {geo(tri)} ({len(tri)} problems), compile {geo(comp)} ({len(comp)})")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
