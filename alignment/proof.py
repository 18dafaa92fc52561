"""Proof that alignment moves the model (issue 5, section 4): on the toy task (alignment.toytask)
SFT on a 50/50 fast/slow mix, then DPA and RLPF from that SFT model, each measured by sampling
and executing in the sandbox. Used by benchmarks/alignment_proof.py and the test suite."""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from .dpa import DPAStageConfig, run_dpa
from .rlpf import RLPFStageConfig, run_rlpf
from .sft import SFTStageConfig, run_sft
from .toytask import PROBLEMS, build_toy_task, sample_and_classify, summarize_runtimes


@dataclass
class ProofConfig:
    workdir: str = "runs/alignment_proof"
    seed: int = 0
    copies: int = 8                 # SFT copies of each (prompt, fast) and (prompt, slow)
    sft_epochs: float = 16.0
    sft_learning_rate: float = 2e-3
    dpa_epochs: float = 4.0
    dpa_learning_rate: float = 1e-4
    rlpf_episodes: int = 96         # PPO samples (batches of one sample per prompt)
    rlpf_learning_rate: float = 3e-5
    samples_per_prompt: int = 16    # evaluation samples per prompt and model
    temperature: float = 1.0        # evaluation sampling (top-k 0, top-p 1)


def run_proof(cfg: ProofConfig) -> dict:
    """SFT -> (DPA, RLPF); the share of fast-and-correct samples before and after each."""
    from sandbox import Sandbox

    t0 = time.time()
    w = Path(cfg.workdir)
    sb = Sandbox(backend="auto", workers=2)
    task = build_toy_task(w / "task", sandbox=sb, copies=cfg.copies)
    timings = {"task_s": time.time() - t0}
    common = dict(data_path=str(task.data_dir), seed=cfg.seed, overwrite=True)

    def measure(run_dir) -> dict:
        return sample_and_classify(task, run_dir, cfg.samples_per_prompt, seed=cfg.seed,
                                   temperature=cfg.temperature, sandbox=sb).to_dict()

    t = time.time()
    sft = run_sft(SFTStageConfig.embedded(output_dir=str(w / "sft"), num_train_epochs=cfg.sft_epochs,
                                          learning_rate=cfg.sft_learning_rate, **common))
    timings["sft_s"] = time.time() - t
    before = measure(sft.run_dir)
    t = time.time()
    dpa = run_dpa(DPAStageConfig.embedded(model_name_or_path=str(sft.run_dir), output_dir=str(w / "dpa"),
                                          num_train_epochs=cfg.dpa_epochs, learning_rate=cfg.dpa_learning_rate, **common))
    timings["dpa_s"] = time.time() - t
    after_dpa = measure(dpa.run_dir)
    t = time.time()
    batch = len(PROBLEMS)  # one sample per prompt per PPO batch
    rlpf = run_rlpf(RLPFStageConfig.embedded(model_name_or_path=str(sft.run_dir), codecontests_dir=str(task.codecontests_dir),
                                             output_dir=str(w / "rlpf"), per_device_train_batch_size=batch,
                                             num_mini_batches=2, total_episodes=cfg.rlpf_episodes,
                                             learning_rate=cfg.rlpf_learning_rate, **common))
    timings["rlpf_s"] = time.time() - t
    after_rlpf = measure(rlpf.run_dir)
    timings["total_s"] = time.time() - t0
    result = {
        "config": asdict(cfg), "task": summarize_runtimes(task), "sandbox_backend": sb.name,
        "sft": before, "dpa": after_dpa, "rlpf": after_rlpf,
        "stage_metrics": {"sft": sft.metrics, "dpa": dpa.metrics, "rlpf": rlpf.metrics},
        "timings": {k: round(v, 1) for k, v in timings.items()},
    }
    w.mkdir(parents=True, exist_ok=True)
    (w / "proof.json").write_text(json.dumps(result, indent=2, default=str))
    return result


def format_proof(result: dict) -> str:
    rows = [f"{'model':<6} {'fast&correct':>13} {'slow&correct':>13} {'incorrect':>10} {'share fast&correct':>19}"]
    for name in ("sft", "dpa", "rlpf"):
        r = result[name]
        rows.append(f"{name:<6} {r['fast_correct']:>13} {r['slow_correct']:>13} {r['incorrect']:>10} "
                    f"{r['fast_correct_share']:>19.3f}")
    m = result["stage_metrics"]
    rows.append(f"SFT eval perplexity {m['sft']['eval_perplexity']:.3f}; DPA eval accuracy (Eq. 8) "
                f"{m['dpa']['eval_accuracy']:.3f}; RLPF eval mean reward {m['rlpf']['eval_mean_reward_before']:.3f} -> "
                f"{m['rlpf']['eval_mean_reward']:.3f}, KL {m['rlpf']['eval_kl']:.3f}")
    rows.append(f"threshold {result['task']['threshold_s'] * 1000:.1f} ms CPU (fast refs ~"
                f"{result['task']['fast_median_s'] * 1000:.1f} ms, slow refs ~{result['task']['slow_median_s'] * 1000:.1f} ms); "
                f"timings {result['timings']}")
    return "\n".join(rows)
