"""Alignment components: tiny model, configs, input checks, the TRL loss equivalences (Eq. 2, Eq. 7),
the Eq. 4 reward and its PPO adapter. The end-to-end runs are in test_alignment_proof.py."""
from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from types import SimpleNamespace

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest
import torch

from alignment import models
from alignment.common import METRICS_FILE
from alignment.data import ContestProblem, load_triplet_rows, preference_rows
from alignment.dpa import DPAStageConfig, make_dpa_trainer_class, run_dpa
from alignment.equations import dpa_loss, reward_model_loss
from alignment.profiles import embedded_profile, production_profile
from alignment.prompts import format_response, instruction_prompt
from alignment.reward import PerformanceReward, PromptInfo, RewardAdapter
from alignment.reward_model import RewardStageConfig, train_reward_model
from alignment.rlpf import RLPFStageConfig, run_rlpf
from alignment.scoring import completion_logprobs, reward_scores
from alignment.sft import SFTStageConfig, run_sft
from alignment.toytask import PROBLEMS, build_toy_task
from perfdata.triplets import TRIPLET_SCHEMA, read_table
from sandbox import Verdict


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    return build_toy_task(tmp_path_factory.mktemp("toy"), copies=2, repeats=1)


@pytest.fixture(scope="module")
def tiny():
    path = models.embedded_base_model()
    return path, models.load_tokenizer(str(path))


# --------------------------------------------------------------------------- models, configs
def test_tiny_model_is_built_once(tmp_path):
    first = models.embedded_base_model(cache_dir=tmp_path)
    stamp = (first / "perfalign_tiny.json").stat().st_mtime_ns
    assert models.embedded_base_model(cache_dir=tmp_path) == first
    assert (first / "perfalign_tiny.json").stat().st_mtime_ns == stamp  # reused, not rebuilt
    info = json.loads((first / "perfalign_tiny.json").read_text())
    assert 1_000_000 < info["parameters"] < 10_000_000
    tok = models.load_tokenizer(str(first))
    text = instruction_prompt("Sum 1..n", "python3") + format_response("print(n * (n + 1) // 2)", "python3")
    assert tok.decode(tok(text)["input_ids"]) == text
    assert tok.pad_token_id != tok.eos_token_id
    assert models.resolve_model("embedded") == str(models.embedded_base_model())
    assert models.resolve_model(models.PRODUCTION_BASE_MODEL) == "deepseek-ai/deepseek-coder-6.7b-base"


def test_production_defaults_are_the_papers():
    sft, rm, rl, dpa = SFTStageConfig(), RewardStageConfig(), RLPFStageConfig(), DPAStageConfig()
    assert sft.model_name_or_path == rm.model_name_or_path == "deepseek-ai/deepseek-coder-6.7b-base"
    assert (sft.num_train_epochs, sft.learning_rate, sft.bf16) == (3.0, 1.41e-5, True)
    assert sft.per_device_train_batch_size * sft.gradient_accumulation_steps * 4 == 64  # 4 GPUs
    assert (rm.num_train_epochs, rm.learning_rate, rm.max_margin) == (1.0, 1.41e-5, 3.0)
    assert rm.per_device_train_batch_size * rm.gradient_accumulation_steps * 4 == 64
    assert (rl.num_ppo_epochs, rl.learning_rate, rl.kl_coef, rl.temperature) == (4, 1.41e-5, 0.1, 1.0)
    assert rl.batch_size * 4 == 4
    assert (dpa.num_train_epochs, dpa.learning_rate, dpa.beta, dpa.optim) == (1.0, 1e-7, 0.6, "adamw_torch")
    assert dpa.per_device_train_batch_size * dpa.gradient_accumulation_steps * 4 == 4
    prod = production_profile("d", "w", "cc")
    assert prod["rlpf"].model_name_or_path == prod["dpa"].model_name_or_path == str(Path("w") / "sft")
    assert prod["rlpf"].reward_model_path == str(Path("w") / "reward_model")
    emb = embedded_profile("d", "w", overrides={"sft": {"num_train_epochs": 1.0}})
    assert all(not c.bf16 and c.use_cpu for c in emb.values())
    assert emb["sft"].model_name_or_path == "embedded" and emb["sft"].num_train_epochs == 1.0


def test_accelerate_fsdp_config_and_launcher(tmp_path):
    from accelerate.commands.config.config_args import load_config_from_file

    cfg = load_config_from_file(str(Path(models.REPO_ROOT) / "alignment" / "accelerate_fsdp.yaml"))
    assert str(cfg.distributed_type) in ("FSDP", "DistributedType.FSDP")
    assert (cfg.num_processes, cfg.num_machines, cfg.mixed_precision) == (4, 1, "bf16")
    from alignment.launch import main

    path = tmp_path / "dpa.json"
    path.write_text(json.dumps({"stage": "DPAStageConfig", "beta": 0.0, "bf16": False, "use_cpu": True}))
    with pytest.raises(ValueError, match="beta"):
        main(["dpa", str(path)])


# --------------------------------------------------------------------------- input checks
@pytest.fixture
def no_model_loading(monkeypatch):
    """The checks must fire before any model is loaded."""
    def boom(*a, **k):
        raise AssertionError("a model was loaded before the input checks")
    for mod in ("alignment.sft", "alignment.dpa", "alignment.rlpf"):
        monkeypatch.setattr(f"{mod}.load_causal_lm", boom)
    monkeypatch.setattr("alignment.reward_model.load_sequence_classifier", boom)


def _write_triplets(path: Path, rows: list[dict]):
    import pyarrow as pa
    import pyarrow.parquet as pq

    (path / "data").mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=TRIPLET_SCHEMA), path / "data" / "triplets-00000-of-00001.parquet")


def test_bad_inputs_fail_before_training(toy, tmp_path, no_model_loading):
    data, cc = str(toy.data_dir), str(toy.codecontests_dir)
    with pytest.raises(ValueError, match="bf16=True needs a GPU"):
        run_sft(SFTStageConfig(data_path=data, output_dir=str(tmp_path / "a"), use_cpu=True))
    with pytest.raises(FileNotFoundError, match="no table 'sft_prompts'"):
        run_sft(SFTStageConfig.embedded(data_path=str(tmp_path / "nothing"), output_dir=str(tmp_path / "a")))
    with pytest.raises(FileNotFoundError, match="not a model directory"):
        run_sft(SFTStageConfig.embedded(model_name_or_path=str(tmp_path / "no-model"), data_path=data,
                                        output_dir=str(tmp_path / "a")))
    (tmp_path / "done").mkdir()
    (tmp_path / "done" / METRICS_FILE).write_text("{}")
    with pytest.raises(FileExistsError, match="finished run"):
        run_sft(SFTStageConfig.embedded(data_path=data, output_dir=str(tmp_path / "done")))
    with pytest.raises(ValueError, match="no triplets in splits"):
        train_reward_model(RewardStageConfig.embedded(data_path=data, output_dir=str(tmp_path / "r"),
                                                      eval_splits=("nope",)))
    with pytest.raises(ValueError, match="beta"):
        run_dpa(DPAStageConfig.embedded(model_name_or_path="embedded", data_path=data, beta=0.0,
                                        output_dir=str(tmp_path / "d")))
    rl = dict(model_name_or_path="embedded", data_path=data, output_dir=str(tmp_path / "p"))
    with pytest.raises(ValueError, match="set codecontests_dir"):
        run_rlpf(RLPFStageConfig.embedded(per_device_train_batch_size=6, **rl))
    with pytest.raises(ValueError, match="one PPO batch takes 8"):
        run_rlpf(RLPFStageConfig.embedded(codecontests_dir=cc, **rl))
    with pytest.raises(ValueError, match="multiple of num_mini_batches"):
        run_rlpf(RLPFStageConfig.embedded(codecontests_dir=cc, per_device_train_batch_size=5, **rl))
    # synthetic RL prompts need the reward model
    rows = [dict(r, source="synthetic") for r in load_triplet_rows(data, ("rl_train", "rl_eval"))]
    _write_triplets(tmp_path / "syn", rows)
    with pytest.raises(FileNotFoundError, match="RLPF reward model"):
        run_rlpf(RLPFStageConfig.embedded(**{**rl, "data_path": str(tmp_path / "syn")}, per_device_train_batch_size=6,
                                          reward_model_path=str(tmp_path / "no-rm")))
    # contest prompts whose problem is missing from CodeContests-Perf
    rows = [dict(r, problem_id="ghost") for r in load_triplet_rows(data, ("rl_train", "rl_eval"))]
    _write_triplets(tmp_path / "ghost", rows)
    with pytest.raises(ValueError, match="not in"):
        run_rlpf(RLPFStageConfig.embedded(**{**rl, "data_path": str(tmp_path / "ghost")}, codecontests_dir=cc,
                                          per_device_train_batch_size=6))


# --------------------------------------------------------------------------- TRL losses = the equations
def _ordered_batch(trainer, n):
    from torch.utils.data import DataLoader

    return next(iter(DataLoader(trainer.train_dataset.select(range(n)), batch_size=n, collate_fn=trainer.data_collator)))


def test_reward_trainer_loss_is_eq2(toy, tiny, tmp_path):
    from datasets import Dataset
    from trl import RewardTrainer

    path, tok = tiny
    cfg = RewardStageConfig.embedded(data_path=str(toy.data_dir), output_dir=str(tmp_path))
    pairs = preference_rows(load_triplet_rows(toy.data_dir, ("reward_train",)), 3.0)
    assert {p["margin"] for p in pairs} == {3.0}  # toy: speedups > 3 and incorrect d_s -> lambda
    pairs = [dict(p, margin=m) for p, m in zip(pairs, [0.0, 0.5, 1.0, 2.0, 3.0, 1.5])]
    model = models.load_sequence_classifier(str(path), pad_token_id=tok.pad_token_id, seed=1)
    trainer = RewardTrainer(model=model, args=cfg.trl_args(), train_dataset=Dataset.from_list(pairs), processing_class=tok)
    batch = _ordered_batch(trainer, 6)
    with torch.no_grad():
        loss = trainer.compute_loss(model, batch)
    prompts = [p["prompt"] for p in pairs[:6]]
    r_f = reward_scores(model, tok, prompts, [p["chosen"] for p in pairs[:6]])
    r_s = reward_scores(model, tok, prompts, [p["rejected"] for p in pairs[:6]])
    want = reward_model_loss(r_f, r_s, torch.tensor([p["margin"] for p in pairs[:6]]))
    assert float(loss) == pytest.approx(float(want), rel=1e-5)


def test_dpa_trainer_loss_is_eq7(toy, tiny, tmp_path):
    from datasets import Dataset

    path, tok = tiny
    cfg = DPAStageConfig.embedded(model_name_or_path=str(path), data_path=str(toy.data_dir), output_dir=str(tmp_path))
    pairs = preference_rows(load_triplet_rows(toy.data_dir, ("reward_train",)), 3.0)
    pairs = [dict(p, margin=m) for p, m in zip(pairs, [0.0, 0.5, 1.0, 2.0, 3.0, 1.5])]
    model = models.load_causal_lm(str(path))
    ref = copy.deepcopy(model)
    trainer = make_dpa_trainer_class()(model=model, args=cfg.trl_args(), train_dataset=Dataset.from_list(pairs),
                                       processing_class=tok)  # reference log-probs precomputed from `model` here
    torch.manual_seed(0)
    with torch.no_grad():  # move the policy away from the reference
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    batch = _ordered_batch(trainer, 6)
    with torch.no_grad():
        loss = trainer.compute_loss(model, batch)
    prompts = [p["prompt"] for p in pairs]
    pol_f = completion_logprobs(model, tok, prompts, [p["chosen"] for p in pairs]).sums
    pol_s = completion_logprobs(model, tok, prompts, [p["rejected"] for p in pairs]).sums
    ref_f = completion_logprobs(ref, tok, prompts, [p["chosen"] for p in pairs]).sums
    ref_s = completion_logprobs(ref, tok, prompts, [p["rejected"] for p in pairs]).sums
    margins = torch.tensor([p["margin"] for p in pairs])
    assert (pol_f - ref_f).abs().max() > 0.1  # the check is not vacuous
    assert float(loss) == pytest.approx(float(dpa_loss(pol_f, pol_s, ref_f, ref_s, margins, 0.6)), rel=1e-4)
    assert float(loss) != pytest.approx(float(dpa_loss(pol_f, pol_s, ref_f, ref_s, 0.0, 0.6)), rel=1e-3)


# --------------------------------------------------------------------------- Eq. 4 and the PPO adapter
class StubSandbox:
    """Records run_many batches; a program's "runtime" is read from its text."""

    def __init__(self):
        self.batches: list[int] = []
        self.flaky_left = 1

    def run_many(self, jobs, workers=2):
        self.batches.append(len(jobs))
        for i, job in enumerate(jobs):
            if "flaky" in job.source and self.flaky_left:
                self.flaky_left -= 1
                yield i, SimpleNamespace(verdict=Verdict.SANDBOX_ERROR, mean_cpu_time_s=None)
            elif "bad" in job.source:
                yield i, SimpleNamespace(verdict=Verdict.WRONG_ANSWER, mean_cpu_time_s=0.01)
            else:
                yield i, SimpleNamespace(verdict=Verdict.OK, mean_cpu_time_s=float(job.source.split()[-1]))


def _problem(pid="p", medians=None):
    return ContestProblem(pid, ["1\n"], ["1\n"], 2.0, 256, medians if medians is not None else {"python3": 0.1})


def test_performance_reward_eq4_batched_and_cached(monkeypatch):
    sb = StubSandbox()
    monkeypatch.setattr("alignment.reward.reward_scores", lambda m, t, prompts, comps, *a: torch.tensor([0.25] * len(prompts)))
    reward = PerformanceReward({"p": _problem(), "q": _problem("q", {})}, reward_model=object(), tokenizer=None, sandbox=sb)
    c, s = PromptInfo("P", "p", "python3", "contest"), PromptInfo("S", "syn", "python3", "synthetic")
    fence = lambda code: format_response(code, "python3")
    responses = [fence("# fast 0.05"), fence("# slow 0.2"), fence("# bad 0"), "no code at all", fence("# fast 0.05"),
                 fence("# flaky 0.1"), "whatever", fence("# ok 0.1")]
    infos = [c, c, c, c, c, c, s, PromptInfo("Q", "q", "python3", "contest")]
    got = reward(infos, responses)
    assert [d.reward for d in got] == pytest.approx([1.0, -0.5, -1.0, -1.0, 1.0, 0.0, 0.25, 0.25])
    assert [d.kind for d in got] == ["execution", "execution", "execution", "no_code", "execution", "execution",
                                     "reward_model", "reward_model"]  # flaky: retried once, then ran
    assert sb.batches == [5, 1]  # one batched run_many (duplicates run once), one retry
    reward(infos[:2], responses[:2])
    assert sb.batches == [5, 1]  # cached: nothing re-run
    capped = PerformanceReward({"p": _problem()}, sandbox=StubSandbox(), max_reward=0.5)
    assert capped([c], [fence("# fast 0.01")])[0].reward == 0.5
    with pytest.raises(ValueError, match="needs the reward model"):
        PerformanceReward({}, sandbox=StubSandbox())([s], ["x"])


def test_reward_adapter_through_trl_get_reward(tiny):
    from trl.experimental.utils import get_reward

    _, tok = tiny
    infos = [PromptInfo(instruction_prompt(p.statement, "python3"), p.problem_id, "python3", "contest") for p in PROBLEMS[:3]]
    index = {tuple(tok(i.prompt)["input_ids"]): i for i in infos}
    seen = []

    def fake_reward(batch_infos, texts):
        seen.extend(zip([i.problem_id for i in batch_infos], texts))
        return [SimpleNamespace(reward=float(len(t)), kind="execution") for t in texts]

    adapter = RewardAdapter(fake_reward, tok, index)
    pad = tok.pad_token_id
    prompts = [tok(i.prompt)["input_ids"] for i in infos]
    responses = [tok("```python\nprint(1)\n```")["input_ids"] + [tok.eos_token_id], tok("x = 2")["input_ids"], []]
    ctx = max(map(len, prompts))
    width = ctx + max(map(len, responses)) + 2
    rows = [[pad] * (ctx - len(p)) + p + r + [pad] * (width - ctx - len(r)) for p, r in zip(prompts, responses)]
    _, rewards, _ = get_reward(adapter, torch.tensor(rows), pad, ctx)
    texts = ["```python\nprint(1)\n```", "x = 2", ""]
    assert [s[1] for s in seen] == texts and [s[0] for s in seen] == [p.problem_id for p in PROBLEMS[:3]]
    assert rewards.tolist() == [float(len(t)) for t in texts]
    with pytest.raises(KeyError):
        adapter.split(tok("unknown prompt")["input_ids"])


def test_performance_reward_in_the_real_sandbox(toy):
    from alignment.data import load_contest_problems

    problems = load_contest_problems(toy.codecontests_dir)
    p = PROBLEMS[0]
    med = problems[p.problem_id].median_runtime_s["python3"]
    assert med == pytest.approx(sum(toy.reference_runtimes[p.problem_id].values()) / 2)
    reward = PerformanceReward(problems)
    info = PromptInfo(instruction_prompt(p.statement, "python3"), p.problem_id, "python3", "contest")
    fast, slow, wrong = reward([info] * 3, [format_response(c, "python3") for c in (p.fast, p.slow, p.wrong)])
    assert fast.verdict == "OK" and slow.verdict == "OK" and wrong.verdict == "WRONG_ANSWER"
    assert fast.reward == pytest.approx(med / fast.runtime_s - 1)
    assert fast.reward > 0.5 > 0 > slow.reward > -1 == wrong.reward


def test_stage_runs_under_accelerate_launch(toy, tmp_path):
    """The multi-GPU entry point, exercised small: `accelerate launch` (one CPU process here,
    FSDP with 4 GPUs in production) runs a stage from its JSON config."""
    import dataclasses
    import os
    import subprocess
    import sys

    cfg = SFTStageConfig.embedded(data_path=str(toy.data_dir), output_dir=str(tmp_path / "sft"), max_steps=2)
    path = tmp_path / "sft.json"
    path.write_text(json.dumps(dataclasses.asdict(cfg)))
    accelerate = str(Path(sys.executable).parent / "accelerate")
    p = subprocess.run([accelerate, "launch", "--cpu", "--num_processes", "1", "--num_machines", "1",
                        "--mixed_precision", "no", "--dynamo_backend", "no", "-m", "alignment.launch", "sft", str(path)],
                       cwd=models.REPO_ROOT, env=dict(os.environ, HF_HUB_OFFLINE="1"), capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["metrics"]["train_steps"] == 2 and out["metrics"]["eval_perplexity"] > 0
    assert (tmp_path / "sft" / "metrics.json").exists()
