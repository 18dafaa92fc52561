"""Seed 0 (the pilot): per-prompt paired differences between models over the 42 held-out prompts (4 samples each,
the same seeds for every model), mean and 95 % t-interval over prompts. Within-seed only: the seed-to-seed spread
is not in these intervals (that needs the confirmatory seeds). Output: paired_prompts.txt. Another folder of
eval_MODEL_heldout.jsonl files (one seed's) as the argument: the same table for it."""
import collections
import json
import pathlib
import sys

from scipy import stats

HERE = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).parent
share = {}
for path in HERE.glob("eval_*_heldout.jsonl"):
    per = collections.defaultdict(lambda: [0, 0, 0])
    for line in path.read_text().splitlines():
        r = json.loads(line)
        p = per[r["problem_id"]]
        p[0] += 1
        p[1] += r["label"] == "fast_correct"
        p[2] += r["label"] in ("fast_correct", "slow_correct")
    share[path.stem.split("_")[1]] = {pid: (fc / n, c / n) for pid, (n, fc, c) in per.items()}
PAIRS = (("dpa", "sft"), ("dpo", "sft"), ("rft", "sft"), ("dpa", "rft"), ("dpa", "dpo"), ("nll", "sft"), ("dpa", "nll"),
         ("rlpf", "sft"), ("rlpf", "rft"), ("rlpf", "dpa"))
for a, b in PAIRS:
    if a not in share or b not in share:
        continue
    ids = sorted(share[a])
    for k, name in ((0, "fast & correct"), (1, "correct")):
        d = [share[a][i][k] - share[b][i][k] for i in ids]
        m, se = sum(d) / len(d), stats.sem(d)
        h = se * stats.t.ppf(0.975, len(d) - 1)
        print(f"{a}-{b:4s} {name:15s} {m:+.3f} [{m - h:+.3f}, {m + h:+.3f}] over {len(d)} prompts")
