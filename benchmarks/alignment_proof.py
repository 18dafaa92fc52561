"""Does alignment move the model? SFT on a 50/50 fast/slow mix of correct Python programs, then
DPA and RLPF from it; prints the share of fast-and-correct samples (executed in the sandbox)
before and after, for one or more seeds.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/alignment_proof.py --seeds 0 1 2
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from alignment.proof import ProofConfig, format_proof, run_proof  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", default="runs/alignment_proof")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--samples-per-prompt", type=int, default=32)
    ap.add_argument("--sft-epochs", type=float, default=ProofConfig.sft_epochs)
    ap.add_argument("--rlpf-episodes", type=int, default=ProofConfig.rlpf_episodes)
    args = ap.parse_args()
    shares = {"sft": [], "dpa": [], "rlpf": []}
    for seed in args.seeds:
        cfg = ProofConfig(workdir=str(Path(args.workdir) / f"seed{seed}"), seed=seed,
                          samples_per_prompt=args.samples_per_prompt, sft_epochs=args.sft_epochs,
                          rlpf_episodes=args.rlpf_episodes)
        result = run_proof(cfg)
        print(f"\n== seed {seed} ({cfg.workdir}/proof.json)")
        print(format_proof(result), flush=True)
        for k in shares:
            shares[k].append(result[k]["fast_correct_share"])
    print("\n== share of fast-and-correct samples, per seed:", json.dumps(shares))
    for k, v in shares.items():
        print(f"{k:<5} mean {statistics.mean(v):.3f}  min {min(v):.3f}  max {max(v):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
