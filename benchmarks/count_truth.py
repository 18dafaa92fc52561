"""The counted clocks against a truth that can be trusted, part by part (sandbox/clock.py,
docs/sandbox.md "Priced work"; docs/evaluation.md "Busy machine").

The truth, two ways, each a median of paired rounds with a 95% interval (t on the mean of the
rounds' log ratios): ``--native-rounds N``, the driver's own per-call CPU clock, N rounds of the
reference and the slow control back to back at the harness's calibrated calls, the ratio of their
per-call medians; and ``--truth``, a CPU-clock sweep of benchmarks/eval_harness_bench.py with many
rounds (``--repeats 21 --json TRUTH``), per round (reference - null) / (slow - null), the harness's
own outside path.

The counts: per problem, one probe session under ``cycles`` calibrates the calls per run as the
harness does; then the null run, the reference and the slow control run once each at those calls
(a count is deterministic). perfcount's summary of each run is split into its priced parts per
call (plain instructions, kernel-moved bytes, instruction-class weights, page faults, L1 and LL
misses), and the speedup is given by each clock and with each priced part left out, which shows
which part carries a miss.

    .venv/bin/python benchmarks/count_truth.py [--native-rounds 15] [--truth TRUTH.json] [--json OUT.json]
        [--problems ... --kernels ...] [--calls-factor 8] [--no-counts]

``--calls-factor K`` counts at K times the calibrated calls: a one-time cost (the first call's page
faults) spread over more calls, as the native per-call median never sees it.
"""
from __future__ import annotations

import argparse
import json
import math
import secrets
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scipy import stats  # noqa: E402

from benchmarks.eval_harness_bench import DEFAULT_PAREVAL, DEFAULT_POLYBENCH, EXTERNAL  # noqa: E402
from perfalign.evaluation.tasks.pareval import ParEvalCheckout  # noqa: E402
from perfalign.evaluation.tasks.polybench import PolyBenchCheckout  # noqa: E402
from perfalign.measure.harness import ProbeSession, ProbeSettings  # noqa: E402
from perfalign.sandbox import Sandbox  # noqa: E402
from perfalign.sandbox import clock as clk  # noqa: E402

FIELDS = ("Ir", "I1mr", "ILmr", "D1mr", "D1mw", "DLmr", "DLmw", "clreq", "kbytes", "wextra", "faults", "repbytes",
          "repstarts", "D1s", "DLs")


def truth(rows: list[dict]) -> dict[str, dict]:
    """Per problem: the paired native speedup of the slow control (median of the rounds' ratios),
    the 95% interval of the rounds' geometric mean, the rounds, and the in-process truth."""
    out = {}
    for r in rows:
        rc = r.get("round_clocks")
        if not rc or "unusable" in r:
            continue
        logs = [math.log((x["__reference__"] - x["__null__"]) / (x["slow"] - x["__null__"])) for x in rc
                if x["__reference__"] > x["__null__"] and x["slow"] > x["__null__"]]
        out[r["problem"]] = {**ci95([math.exp(v) for v in logs]), "inprocess": r.get("slow_true"),
                             "calls": r.get("calls")}
    return out


def ci95(ratios: list[float]) -> dict:
    """The median of paired ratios, and the 95% interval of their geometric mean (t on the logs)."""
    logs = [math.log(r) for r in ratios]
    m, se = statistics.fmean(logs), statistics.stdev(logs) / math.sqrt(len(logs))
    t = stats.t.ppf(0.975, len(logs) - 1)
    return {"median": statistics.median(ratios), "geomean": math.exp(m),
            "ci95": [math.exp(m - t * se), math.exp(m + t * se)], "rounds": len(logs)}


def native(p, sb: Sandbox, rounds: int) -> dict:
    """The slow control's speedup by the driver's own per-call CPU clock: per round, the reference
    and the slow control run back to back (in a fresh random order) at the calls the harness
    calibrates, the ratio of their per-call medians; the rounds' median and interval."""
    sess = ProbeSession(sb, p, ProbeSettings())
    sess.prepare()
    ratios = []
    for _ in range(rounds):
        seed, med = secrets.randbits(63), {}
        for label, code in sess.order_rng.sample([("reference", p.reference), ("slow", p.slow)], 2):
            res = sess.run(code, "T", sess.calls, seed, max(10.0, 10 * sess.ref_run_s))
            times = sess.transcript(res).times(p.clock) if res.ok else []
            if not times:
                raise RuntimeError(f"{p.key} {label}: {res.verdict} (no per-call times)")
            med[label] = statistics.median(times)
        ratios.append(med["reference"] / med["slow"])
    return {"calls": sess.calls, "ratios": ratios, **ci95(ratios)}


class Recorder:
    """perfcount's summary of every counted run, by the run's label (runs go one at a time)."""

    def __init__(self) -> None:
        self.label, self.seen, self._parse = "", {}, clk.parse_log
        clk.parse_log = self.parse

    def parse(self, text: str, pid: int):
        for line in text.splitlines():
            if f"=={pid}== perfcount: Ir" in line:
                nums = [int(v) for v in line.split("perfcount: ", 1)[1].split()[1::2]]
                self.seen[self.label] = dict(zip(FIELDS, nums))
        return self._parse(text, pid)


def counted(p, sb: Sandbox, rec: Recorder, factor: int = 1) -> dict:
    """The three programs' summaries at ``factor`` times the calls a cycles session calibrates, per call."""
    sess = ProbeSession(sb, p, ProbeSettings(clock="cycles"))
    sess.prepare()
    sess.calls *= factor
    seed = secrets.randbits(63)
    for label, code in (("null", p.null()), ("reference", p.reference), ("slow", p.slow)):
        rec.label = label
        res = sess.run(code, "T", sess.calls, seed, max(10.0, 10 * factor * sess.ref_run_s))
        if not res.ok:
            raise RuntimeError(f"{p.key} {label}: {res.verdict} {res.tests[0].message if res.tests else ''}")
    s = {k: rec.seen[k] for k in ("null", "reference", "slow")}
    per_call = {k: {f: (s[k][f] - s["null"][f]) / sess.calls for f in FIELDS} for k in ("reference", "slow")}
    return {"calls": sess.calls, "summaries": s, "per_call": per_call}


def speedups(c: dict) -> dict[str, float]:
    """The slow control's counted speedup by each clock, and with each priced part left out."""
    fp = clk.FAULT_PAGES * 4096

    def cost(d: dict, drop: str, clock: str) -> float:
        ir = d["Ir"] - {"": 0, "wextra": d["wextra"], "kbytes": d["kbytes"] / clk.KERNEL_BYTES,
                        "copies": d["repbytes"] / clk.COPY_BYTES + d["repstarts"] * clk.REP_START,
                        "faults": d["faults"] * fp}[drop]
        fault_lines = d["faults"] * fp / 64 if drop == "faults" else 0
        n = clk.Counts(ir, d["I1mr"] + d["D1mr"] + d["D1mw"] - fault_lines, d["ILmr"] + d["DLmr"] + d["DLmw"],
                       l1_stream=d["D1s"] - fault_lines, ll_stream=d["DLs"])
        return ir if clock == "instructions" else clk.cycles(n)

    ref, slow = c["per_call"]["reference"], c["per_call"]["slow"]
    return {clock + (f"-{drop}" if drop else ""): cost(ref, drop, clock) / cost(slow, drop, clock)
            for clock in clk.DETERMINISTIC for drop in ("", "wextra", "kbytes", "copies", "faults")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--truth", default=None, help="an eval_harness_bench.py --json of a CPU-clock sweep")
    ap.add_argument("--problems", default=",".join(DEFAULT_PAREVAL))
    ap.add_argument("--kernels", default=",".join(DEFAULT_POLYBENCH))
    ap.add_argument("--native-rounds", type=int, default=0,
                    help="also the driver's per-call CPU clock, this many paired rounds per problem (0: none)")
    ap.add_argument("--no-counts", action="store_true", help="only the native rounds")
    ap.add_argument("--calls-factor", type=int, default=1,
                    help="count at this many times the calls the harness calibrates (one-time costs amortized)")
    ap.add_argument("--json", default=None, help="also write every record here")
    a = ap.parse_args()
    if a.truth and not Path(a.truth).is_file():
        ap.error(f"--truth {a.truth}: no such file (write one with eval_harness_bench.py --json)")
    tr = truth(json.loads(Path(a.truth).read_text())) if a.truth else {}
    pe, pb = ParEvalCheckout(str(EXTERNAL / "pareval")), PolyBenchCheckout(str(EXTERNAL / "polybench"))
    work = [("pareval", n) for n in a.problems.split(",") if n] + [("polybench", k) for k in a.kernels.split(",") if k]
    rec, rows = Recorder(), []
    print(f"weights: CYCLE_WEIGHTS {clk.CYCLE_WEIGHTS} FAULT_PAGES {clk.FAULT_PAGES} "
          f"INSTRUCTION_WEIGHTS {clk.INSTRUCTION_WEIGHTS}")
    with Sandbox(workers=1) as sb:
        for suite, name in work:
            p = pe.problem(name, "serial", "reduced") if suite == "pareval" else pb.problem(name, "reduced")
            c = {"problem": name, "truth": tr.get(name)}
            if a.native_rounds:
                c["native"] = n = native(p, sb, a.native_rounds)
                print(f"\n{name}  native per-call clock: {n['median']:.3f} CI95 [{n['ci95'][0]:.3f}, "
                      f"{n['ci95'][1]:.3f}] ({n['rounds']} rounds, {n['calls']} calls)", flush=True)
            t = c["truth"]
            if t:
                print(f"{name}  harness rounds: {t['median']:.3f} CI95 [{t['ci95'][0]:.3f}, {t['ci95'][1]:.3f}] "
                      f"({t['rounds']} rounds; in-process {t['inprocess']:.3f})", flush=True)
            rows.append(c)
            if a.no_counts:
                if a.json:
                    Path(a.json).write_text(json.dumps(rows, indent=1))
                continue
            c.update(counted(p, sb, rec, a.calls_factor))
            c["speedups"] = speedups(c)
            print(f"{name}  counted at {c['calls']} calls", flush=True)
            print("  per call  " + " ".join(f"{f:>12}" for f in FIELDS))
            for k in ("reference", "slow"):
                print(f"  {k:9} " + " ".join(f"{c['per_call'][k][f]:12.4g}" for f in FIELDS))
            print("  speedups  " + "  ".join(f"{k} {v:.3f}" for k, v in c["speedups"].items()), flush=True)
            if a.json:
                Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
