"""Alignment stages in two processes under ``accelerate launch``.

The launch config is the shipped FSDP one (alignment/accelerate_fsdp.yaml) with ``use_cpu``,
2 processes and no mixed precision. accelerate 1.15 enables FSDP only on accelerator devices, so
on this CPU-only machine the run is DDP over gloo (``distributed_type`` MULTI_CPU, recorded in
metrics.json): it exercises the rank-sharded reference pass, the gathers and all-reduces and the
per-rank save, not FSDP's parameter sharding (that needs the GPU run, still owed).
"""
from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest
import torch
import yaml

from perfalign.alignment import models
from perfalign.alignment.data import load_triplet_rows, preference_rows
from perfalign.alignment.scoring import completion_logprobs
from perfalign.common.paths import SOURCE_ROOT
from perfalign.config.tables import preset
from perfalign.perfdata.controlled import build_controlled_task, quick_instances

REPO = SOURCE_ROOT
ACCELERATE = str(Path(sys.executable).parent / "accelerate")


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    train, held = quick_instances()
    return build_controlled_task(tmp_path_factory.mktemp("toy"), copies=2, repeats=1, train=train, heldout=held)


@pytest.fixture(scope="module")
def launch_config(tmp_path_factory) -> Path:
    cfg = yaml.safe_load((REPO / "alignment" / "accelerate_fsdp.yaml").read_text())
    cfg.update(use_cpu=True, num_processes=2, mixed_precision="no")
    path = tmp_path_factory.mktemp("accelerate") / "two_cpu_processes.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(launch_config: Path, args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    cmd = [ACCELERATE, "launch", "--config_file", str(launch_config), "--main_process_port", str(_free_port()), *args]
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    p = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    (tmp_path / "launch.log").write_text(p.stdout + p.stderr)
    assert p.returncode == 0, (p.stdout + p.stderr)[-4000:]
    return p


def run_stage(launch_config, stage: str, cfg, tmp_path) -> dict:
    path = tmp_path / f"{stage}.json"
    path.write_text(json.dumps(dataclasses.asdict(cfg)))
    launch(launch_config, ["-m", "perfalign.alignment.launch", stage, str(path)], tmp_path)
    metrics = json.loads((Path(cfg.output_dir) / "metrics.json").read_text())
    assert metrics["launch"] == {"distributed_type": "MULTI_CPU", "num_processes": 2, "device": "cpu:0",
                                 "backend": "gloo"}
    return metrics


def test_dpa_reference_logprobs_in_two_processes(toy, launch_config, tmp_path):
    """Fix 1: TRL 1.12 computes pi_SFT's log-probs with the unprepared policy and shares them via a
    cache file in rank 0's temporary directory (rank 1 crashed with FileNotFoundError here). Now
    a reference copy prepared for the launch mode computes them, rank-sharded and gathered."""
    base = str(models.embedded_base_model())
    cfg = preset("dpa", model_name_or_path=base, data_path=str(toy.data_dir), output_dir=str(tmp_path / "dpa"),
                                  max_steps=2, per_device_train_batch_size=2)
    m = run_stage(launch_config, "dpa", cfg, tmp_path)
    assert m["train_steps"] == 2 and 0.0 <= m["eval_accuracy"] <= 1.0 and 0.0 <= m["train_accuracy"] <= 1.0
    # the gathered reference log-probs are pi_SFT's: the same as one process computes them
    evals = preference_rows(load_triplet_rows(toy.data_dir, cfg.eval_splits), cfg.max_margin)
    tok, model = models.load_tokenizer(base), models.load_causal_lm(base)
    prompts = [e["prompt"] for e in evals]
    for key, col in (("fast", "chosen"), ("slow", "rejected")):
        want = completion_logprobs(model, tok, prompts, [e[col] for e in evals]).sums.mean()
        assert m[f"eval_ref_{key}_logps_mean"] == pytest.approx(float(want), rel=1e-4)
    assert (tmp_path / "dpa" / "model.safetensors").exists()


def test_rlpf_in_two_processes(toy, launch_config, tmp_path):
    """Fix 4 and the save: one rollout per rank (the paper's 4 GPUs x batch 1), advantages
    whitened over both ranks, the KL coefficient adapted from 0.1 identically on every rank, and
    the policy saved (TRL 1.12's PPO save crashed on both ranks once distributed)."""
    base = str(models.embedded_base_model())
    cfg = preset("rlpf", model_name_or_path=base, data_path=str(toy.data_dir),
                                   codecontests_dir=str(toy.codecontests_dir), output_dir=str(tmp_path / "rlpf"),
                                   per_device_train_batch_size=1, num_mini_batches=1, total_episodes=4,
                                   num_ppo_epochs=1, response_length=24, eval_before=False, kl_horizon=10)
    m = run_stage(launch_config, "rlpf", cfg, tmp_path)
    assert m["train_episodes"] == 4 and m["kl_coef_init"] == 0.1
    # two updates of 2 episodes with KL far under the target: gamma *= (1 - 0.2 * 2 / 10) twice
    assert m["kl_coef"] == pytest.approx(0.1 * 0.96 ** 2)
    w = m["train_whitening"]
    assert w["calls"] == 2 and w["world_count"] == 2 * w["local_count"]  # both ranks' tokens
    assert abs(w["local_mean"]) > 1e-9  # rank 0's share is not centred on itself (per-rank: ~1e-17)
    saved = models.load_causal_lm(str(tmp_path / "rlpf"))
    assert (sum(p.numel() for p in saved.parameters())
            == sum(p.numel() for p in models.load_causal_lm(base).parameters()))


WHITEN_SCRIPT = """
import json, sys, torch, torch.distributed as dist
from perfalign.alignment.rlpf_trainer import WorldWhiten
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
values, mask = torch.randn(2, 3, 9), torch.rand(2, 3, 9) > 0.25
mine = WorldWhiten()(values[rank], mask[rank])
out = [None, None]
dist.all_gather_object(out, mine.tolist())
if rank == 0:
    json.dump({"gathered": out}, open(sys.argv[1], "w"))
dist.destroy_process_group()
"""


def test_world_whitening_equals_whitening_the_union(launch_config, tmp_path):
    from trl.experimental.ppo.ppo_trainer import masked_whiten

    script = tmp_path / "whiten.py"
    script.write_text(WHITEN_SCRIPT)
    launch(launch_config, [str(script), str(tmp_path / "out.json")], tmp_path)
    got = torch.tensor(json.loads((tmp_path / "out.json").read_text())["gathered"])
    torch.manual_seed(0)
    values, mask = torch.randn(2, 3, 9), torch.rand(2, 3, 9) > 0.25
    want = masked_whiten(values.reshape(6, 9), mask.reshape(6, 9)).reshape(2, 3, 9)
    assert torch.allclose(got[mask], want[mask], atol=1e-5)
    per_rank = torch.stack([masked_whiten(values[r], mask[r]) for r in range(2)])
    assert not torch.allclose(got[mask], per_rank[mask], atol=1e-3)  # what TRL does per rank differs
