"""Training resumes: each trainer checkpoints (transformers' own checkpoints) and a rerun of the
same config after an interrupt continues from the last checkpoint, not step 0; a checkpoint of
another config is never resumed from."""
from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest

from perfalign.alignment import dpa, models, reward_model, rlpf, sft
from perfalign.alignment.stage_config import COST_FILE, TRAINER_DIR, spent_up_to
from perfalign.config.tables import preset
from perfalign.perfdata.controlled import build_controlled_task, quick_instances

STAGES = {"sft": (sft, sft.run_sft), "reward": (reward_model, reward_model.train_reward_model),
          "dpa": (dpa, dpa.run_dpa)}


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    train, held = quick_instances()
    return build_controlled_task(tmp_path_factory.mktemp("toy"), copies=2, repeats=1, train=train, heldout=held)


class _Interrupt(KeyboardInterrupt):
    pass


def _interrupt_at(monkeypatch, module, step: int) -> None:
    """Ctrl-C at the end of ``step`` (before that step's checkpoint)."""
    from transformers.trainer_callback import TrainerCallback

    original = module.report_steps

    class CtrlC(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step == step:
                raise _Interrupt

    def report_steps(trainer, stage):
        original(trainer, stage)
        trainer.add_callback(CtrlC())  # before add_checkpoints' callback: no checkpoint of `step`

    monkeypatch.setattr(module, "report_steps", report_steps)


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_a_rerun_continues_from_the_last_checkpoint(stage, toy, tmp_path, monkeypatch):
    module, run = STAGES[stage]
    base = str(models.embedded_base_model())
    cfg = preset(stage, model_name_or_path=base, data_path=str(toy.data_dir), output_dir=str(tmp_path / stage),
                 max_steps=4, per_device_train_batch_size=1, gradient_accumulation_steps=1,
                 checkpoint_every_s=1e-6)  # a checkpoint after every step
    with monkeypatch.context() as m:
        _interrupt_at(m, module, 3)
        with pytest.raises(_Interrupt):
            run(cfg)
    trainer_dir = tmp_path / stage / TRAINER_DIR
    assert sorted(p.name for p in trainer_dir.glob("checkpoint-*")) == ["checkpoint-2"]  # one kept
    spent = spent_up_to(str(trainer_dir / "checkpoint-2"))  # the first run's cost up to its checkpoint
    assert spent["cpu_s"] > 0 and spent["wall_s"] > 0
    res = run(cfg)
    assert res.metrics["resumed_from_step"] == 2 and res.metrics["train_steps"] == 4  # not from step 0
    assert res.metrics["spent_before_resume"] == spent  # the resumed run's cost is not the whole cost
    assert res.metrics["checkpointing"]["checkpoints"] == 1  # step 3 (step 4 is the end: the model is saved)
    assert not list(trainer_dir.glob("checkpoint-*"))  # finished: nothing left to resume


def test_ppo_resumes_its_updates_and_kl_coefficient(toy, tmp_path, monkeypatch):
    """TRL's PPO loop has no resume: the checkpoint holds the policy and value weights, the
    optimizer, scheduler, RNG and trainer state and the adaptive KL coefficient."""
    base = str(models.embedded_base_model())
    cfg = preset("rlpf", model_name_or_path=base, data_path=str(toy.data_dir),
                 codecontests_dir=str(toy.codecontests_dir), output_dir=str(tmp_path / "rlpf"),
                 per_device_train_batch_size=1, num_mini_batches=1, total_episodes=4, num_ppo_epochs=1,
                 response_length=16, eval_before=False, kl_horizon=10, max_eval_samples=1, checkpoint_every_s=1e-6)
    with monkeypatch.context() as m:
        _interrupt_at(m, rlpf, 3)
        with pytest.raises(_Interrupt):
            rlpf.run_rlpf(cfg)
    spent = spent_up_to(str(tmp_path / "rlpf" / TRAINER_DIR / "checkpoint-2"))
    assert spent["cpu_s"] > 0
    res = rlpf.run_rlpf(cfg)
    assert res.metrics["resumed_from_step"] == 2 and res.metrics["train_episodes"] == 4
    assert res.metrics["spent_before_resume"] == spent
    # four updates with KL far under the target, two of them before the interrupt:
    # gamma *= (1 - 0.2 * 1 / 10) four times (a fresh controller after the resume: twice)
    assert res.metrics["kl_coef"] == pytest.approx(0.1 * 0.98 ** 4)
    assert res.metrics["train_whitening"]["calls"] == 2  # only the two remaining updates ran


def _interrupted_sft(toy, tmp_path, monkeypatch, steps: int, at: int):
    """An SFT config of ``steps`` with a checkpoint after every step, run until Ctrl-C at step ``at``."""
    base = str(models.embedded_base_model())
    cfg = preset("sft", model_name_or_path=base, data_path=str(toy.data_dir), output_dir=str(tmp_path / "sft"),
                 max_steps=steps, per_device_train_batch_size=1, gradient_accumulation_steps=1,
                 checkpoint_every_s=1e-6)
    with monkeypatch.context() as m:
        _interrupt_at(m, sft, at)
        with pytest.raises(_Interrupt):
            sft.run_sft(cfg)
    return cfg


def test_a_checkpoint_of_another_config_is_not_resumed(toy, tmp_path, monkeypatch):
    cfg = _interrupted_sft(toy, tmp_path, monkeypatch, 3, 2)
    assert list((tmp_path / "sft" / TRAINER_DIR).glob("checkpoint-1"))
    changed = cfg.__class__(**{**cfg.__dict__, "learning_rate": cfg.learning_rate * 2, "checkpoint_every_s": 0.0})
    res = sft.run_sft(changed)
    assert res.metrics["resumed_from_step"] == 0 and res.metrics["train_steps"] == 3
    assert res.metrics["spent_before_resume"] == {"wall_s": 0.0, "cpu_s": 0.0}  # a fresh start
    assert res.metrics["checkpointing"] is None  # checkpoint_every_s = 0: none taken


def test_an_unfinished_align_stage_keeps_its_finished_trainers(toy, tmp_path):
    """A rerun of an interrupted align stage (the pipeline's ``resume``) retrains none of the
    trainers that finished with the same config; a changed config retrains."""
    from perfalign.flows.align import _finished

    base = str(models.embedded_base_model())
    cfg = preset("sft", model_name_or_path=base, data_path=str(toy.data_dir), output_dir=str(tmp_path / "sft"),
                 max_steps=1, per_device_train_batch_size=1, gradient_accumulation_steps=1)
    assert _finished({"sft": cfg}, ["sft"]) == {}
    res = sft.run_sft(cfg)
    kept = _finished({"sft": cfg.__class__(**{**cfg.__dict__, "checkpoint_every_s": 5.0})}, ["sft"])
    assert kept["sft"]["metrics"] == res.metrics and kept["sft"]["kept"]  # the interval is not the config
    assert _finished({"sft": cfg.__class__(**{**cfg.__dict__, "seed": 7})}, ["sft"]) == {}


def test_a_checkpoint_cut_by_a_kill_is_skipped_for_the_last_whole_one(toy, tmp_path, monkeypatch):
    """A session that ends in the middle of a save leaves ``checkpoint-N`` without its trainer state
    (written last): the rerun resumes from the one before, and deletes the cut one."""
    import shutil

    cfg = _interrupted_sft(toy, tmp_path, monkeypatch, 4, 3)
    trainer_dir = tmp_path / "sft" / TRAINER_DIR
    cut = trainer_dir / "checkpoint-3"
    shutil.copytree(trainer_dir / "checkpoint-2", cut)
    (cut / "trainer_state.json").unlink()
    for f in cut.glob("*.safetensors"):
        f.write_bytes(f.read_bytes()[:100])  # the weights cut short as well
    (trainer_dir / "checkpoint-2" / COST_FILE).unlink()  # a checkpoint of a version that did not record it
    res = sft.run_sft(cfg)
    assert res.metrics["resumed_from_step"] == 2 and res.metrics["train_steps"] == 4
    assert not cut.exists()
    assert res.metrics["spent_before_resume"] is None  # unknown, not 0


def test_a_cost_unknown_at_a_resume_stays_unknown(toy, tmp_path, monkeypatch):
    """Resumed from a checkpoint without its cost, a run's own checkpoints cannot know the whole cost
    either: they record none, rather than the part after the resume as if it were all."""
    cfg = _interrupted_sft(toy, tmp_path, monkeypatch, 4, 2)
    trainer_dir = tmp_path / "sft" / TRAINER_DIR
    (trainer_dir / "checkpoint-1" / COST_FILE).unlink()
    with monkeypatch.context() as m:  # resumed at 1, interrupted again at 3 with checkpoint-2 written
        _interrupt_at(m, sft, 3)
        with pytest.raises(_Interrupt):
            sft.run_sft(cfg)
    assert (trainer_dir / "checkpoint-2").is_dir() and not (trainer_dir / "checkpoint-2" / COST_FILE).exists()
    res = sft.run_sft(cfg)
    assert res.metrics["resumed_from_step"] == 2 and res.metrics["spent_before_resume"] is None


def test_the_last_complete_checkpoint_reads_its_trainer_state(tmp_path):
    from perfalign.alignment.stage_config import last_complete_checkpoint

    assert last_complete_checkpoint(tmp_path) is None
    for step, state in ((2, "{}"), (10, '{"global_step": 10}'), (12, '{"glob'), (14, None)):
        d = tmp_path / f"checkpoint-{step}"
        d.mkdir()
        if state is not None:
            (d / "trainer_state.json").write_text(state)
    (tmp_path / "checkpoint-x").mkdir()  # not a step: ignored, kept
    assert last_complete_checkpoint(tmp_path) == str(tmp_path / "checkpoint-10")  # 10 < 12 numerically
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint-10", "checkpoint-2", "checkpoint-x"]
