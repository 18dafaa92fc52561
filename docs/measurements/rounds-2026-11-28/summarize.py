"""Summary of the eval_controls_bench records here: per run, the reference control against itself
(truth 1) and the slow control against TRUTHS (the long recordings of rounds.json, paired estimate
of all rounds), per task: the readings, the largest |error|, the number outside ±10%, the flagged
share, the rounds; and the run's wall, CPU and execution seconds.

    python docs/measurements/rounds-2026-11-28/summarize.py docs/measurements/rounds-2026-11-28/{old,new}*.json
"""
import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).parent


def truths() -> dict:
    rec = HERE / "rounds.json"
    if not rec.exists():
        return {}
    out = {}
    for r in json.loads(rec.read_text())["pairs"]:
        pairs = [(b, c) for b, c in zip(r["baseline"], r["candidate"]) if b and c]
        out[(r["prompt"], r["mode"])] = 1 / (sum(c / b for b, c in pairs) / len(pairs))
    return out


def main() -> None:
    known, total = truths(), {}
    for f in sys.argv[1:]:
        d = json.loads(Path(f).read_text())
        print(f"{Path(f).stem}: wall {d['wall_s']} s, CPU {round(d['user_s'] + d['sys_s'], 1)} s, execution "
              f"{d['execute_s']} s, load {d['load_before'][0]:.1f}-{d['load_after'][0]:.1f}")
        for mode, model in (("reference", "control:reference"), ("slow", "control:slow")):
            for task, prompts in d["controls"].get(model, {}).items():
                cells, errs, flagged = [], [], 0
                for p, (v, se, fl, *n) in sorted(prompts.items()):
                    truth = 1.0 if mode == "reference" else known.get((p, mode)) if task == "controlled" else None
                    err = None if truth is None else math.exp(abs(math.log(v / truth))) - 1
                    errs += [err] if err is not None else []
                    if err is not None:
                        total.setdefault((mode, task), []).append((err, "imprecise_timing" in fl, n[0] if n else None))
                    flagged += "imprecise_timing" in fl
                    cells.append(f"{v:.3f}" + (f" r{n[0]}" if n else "") + ("*" if "imprecise_timing" in fl else ""))
                worst = f"max|err| {100 * max(errs):.1f}%, {sum(e > 0.10 for e in errs)} outside 10%" if errs else ""
                print(f"  {mode:<9} {task:<13} {', '.join(cells)}  {worst}  flagged {flagged}/{len(prompts)}")
    print("all runs given:")
    for (mode, task), rows in sorted(total.items()):
        errs = sorted(e for e, _, _ in rows)
        rounds = [n for _, _, n in rows if n]
        print(f"  {mode:<9} {task:<13} {len(rows)} scores: median |err| {100 * errs[len(errs) // 2]:.1f}%, max "
              f"{100 * errs[-1]:.1f}%, outside 10% {sum(e > 0.10 for e in errs)}, flagged imprecise "
              f"{sum(f for _, f, _ in rows)}" + (f", rounds {min(rounds)}-{max(rounds)} (mean "
                                                 f"{sum(rounds) / len(rounds):.1f})" if rounds else ""))


if __name__ == "__main__":
    main()
