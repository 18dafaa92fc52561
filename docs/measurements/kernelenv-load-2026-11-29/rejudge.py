"""Re-judge recorded rounds of the reference against itself (truth 1.0) with the former error
(the two medians' combined MAD-based error) and the current one (``timing_stats.medians_rel_se``):
per score, the speedup, each error, |log speedup| / error, and what ``judge_timing`` reports now.
Usage: python rejudge.py rounds.json [...]"""
import json
import math
import sys

from perfalign.kernelenv.score import judge_timing
from perfalign.measure import timing_stats as ts

for path in sys.argv[1:]:
    for r in json.load(open(path)):
        pairs = list(zip(r["reference"], r["subject"]))
        if len(pairs) < 3:
            continue
        b, c = (sorted(x)[len(x) // 2] if len(x) % 2 else sum(sorted(x)[len(x) // 2 - 1:len(x) // 2 + 1]) / 2
                for x in (r["reference"], r["subject"]))
        old = ts.combined_rel_se(ts.rel_se_of_cost(r["reference"]), ts.rel_se_of_cost(r["subject"]))
        new = ts.medians_rel_se(pairs)
        err = abs(math.log(b / c))
        t = judge_timing(r["reference"], r["subject"], r["alone"])
        print(f"{path.split('/')[-1]:24s} rounds {len(pairs):2d}  medians {b / c:.3f}  err_old {old:.3f} "
              f"(|log|/err {err / old:4.1f})  err_new {new:.3f} (|log|/err {err / new:4.1f})  "
              f"now: {t.speedup if t.speedup is None else round(t.speedup, 3)} {t.flags} {t.info['decision']}")
