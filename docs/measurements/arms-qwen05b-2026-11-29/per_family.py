"""Per-family counts of the seed-0 SFT and DPA held-out samples in this folder (per_family.txt)."""
import collections
import json
import pathlib

HERE = pathlib.Path(__file__).parent
for model in ("sft", "dpa"):
    rows = [json.loads(line) for line in (HERE / f"eval_{model}_heldout.jsonl").read_text().splitlines()]
    fams: dict = collections.defaultdict(collections.Counter)
    for r in rows:
        fams[r["family"]][r["label"]] += 1
        fams["all"][r["label"]] += 1
    print(model, len(rows), "prompts", len({r["problem_id"] for r in rows}))
    for f, c in sorted(fams.items()):
        n = sum(c.values())
        fc, sc, bad = c["fast_correct"], c["slow_correct"], c["incorrect"] + c.get("no_code", 0)
        print(f"  {f:9s} n={n:3d} fast&correct {fc:3d} slow&correct {sc:3d} incorrect {bad:3d}  "
              f"fc {fc / n:.3f} correct {(fc + sc) / n:.3f}")
