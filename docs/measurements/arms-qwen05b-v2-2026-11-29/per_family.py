"""Per-family counts of seed 0's held-out samples in this folder (eval_MODEL_heldout.jsonl; per_family.txt):
SFT, and the models of DPA's second schedule (pre-registered, docs/alignment.md) and the controls present. Another
folder of eval_MODEL_heldout.jsonl files (one seed's) as the argument: the same counts for it."""
import collections
import json
import pathlib
import sys

HERE = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).parent
for path in sorted(HERE.glob("eval_*_heldout.jsonl"), key=lambda p: (p.stem != "eval_sft_heldout", p.stem)):
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    fams: dict = collections.defaultdict(collections.Counter)
    for r in rows:
        fams[r["family"]][r["label"]] += 1
        fams["all"][r["label"]] += 1
    print(path.stem.split("_")[1], len(rows), "samples,", len({r["problem_id"] for r in rows}), "prompts")
    for f, c in sorted(fams.items()):
        n = sum(c.values())
        fc, sc, bad = c["fast_correct"], c["slow_correct"], c["incorrect"] + c.get("no_code", 0)
        print(f"  {f:9s} n={n:3d} fast&correct {fc:3d} slow&correct {sc:3d} incorrect {bad:3d}  "
              f"fc {fc / n:.3f} correct {(fc + sc) / n:.3f}")
