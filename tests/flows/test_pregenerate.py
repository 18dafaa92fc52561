"""The evaluation's models generated while align trains (flows/pregenerate.py), no training: the
base model at once, a stage's model once its metrics.json is written in this run (a stale one of
an earlier run is not its model; a resumed run's finished stages are); ``stop`` ends the one in
progress (at nice 10 on a busy machine it could take long) and starts no more."""
import os
import threading
import time

from perfalign.evaluation.config import ModelSpec
from perfalign.flows.pregenerate import Pregeneration


def model_dir(path, finished=False, age_s=0.0):
    path.mkdir(parents=True)
    (path / "config.json").write_text("{}")
    if finished:
        (path / "metrics.json").write_text("{}")
        t = time.time() - age_s
        os.utime(path / "metrics.json", (t, t))
    return path


class Recording(Pregeneration):
    """Records what it would generate; with ``endless``, a generation ends only when stopped
        (as call_in_child's child does: Cancelled)."""

    def __init__(self, *args, endless=False, **kwargs):
        self.calls, self.endless, self.started = [], endless, threading.Event()
        super().__init__(*args, **kwargs)

    def _generate(self, spec, config):
        self.calls.append((spec, config))
        self.started.set()
        if self.endless:
            self._stop.wait()
            raise RuntimeError("stopped")
        return 1.5


def until(check, timeout=10.0):
    end = time.monotonic() + timeout
    while not check() and time.monotonic() < end:
        time.sleep(0.02)
    return check()


def test_each_model_once_its_stage_has_finished(tmp_path):
    base, align = model_dir(tmp_path / "base"), tmp_path / "align"
    model_dir(align / "dpa", finished=True, age_s=60)  # an earlier run's: stale until DPA saves again
    sft = model_dir(align / "sft")
    p = Recording(lambda models: {"models": models}, str(base), align, {"sft": "+SFT", "dpa": "+DPA"},
                  since=time.time() - 1)
    assert until(lambda: len(p.calls) == 1)
    (sft / "metrics.json").write_text("{}")
    assert until(lambda: len(p.calls) == 2)
    p.stop()
    assert [(s.label, s.ref) for s, _ in p.calls] == [("base", str(base)), ("+SFT", str(sft))]
    assert p.calls[1][1] == {"models": [ModelSpec("+SFT", str(sft))]}  # the evaluation's config for it
    assert p.generated == {"base": 1.5, "+SFT": 1.5}


def test_a_resumed_run_generates_its_finished_stages(tmp_path):
    align = tmp_path / "align"
    dpa = model_dir(align / "dpa", finished=True, age_s=60)
    p = Recording(lambda models: models, None, align, {"sft": "+SFT", "dpa": "+DPA"}, since=None)
    assert until(lambda: len(p.calls) == 1)
    p.stop()
    assert [(s.label, s.ref) for s, _ in p.calls] == [("+DPA", str(dpa))]


def test_stop_ends_the_model_in_progress_and_starts_no_more(tmp_path):
    align = tmp_path / "align"
    model_dir(align / "sft", finished=True)
    p = Recording(lambda models: models, str(model_dir(tmp_path / "base")), align, {"sft": "+SFT"},
                  since=None, endless=True)
    assert p.started.wait(10)
    t = time.monotonic()
    p.stop()
    assert time.monotonic() - t < 5 and not p._thread.is_alive()
    assert [s.label for s, _ in p.calls] == ["base"] and p.generated == {}


def test_a_hub_name_is_not_generated_here(tmp_path):
    p = Recording(lambda models: models, "org/some-model", tmp_path / "align", {}, since=None)
    p.stop()
    assert p.calls == []


def test_the_pipeline_generates_beside_align_when_models_generate_side_by_side(tmp_path, monkeypatch):
    import dataclasses

    from perfalign.config.tables import load_config
    from perfalign.flows import pipeline as pl
    from perfalign.flows.runstate import RunState

    made = []
    monkeypatch.setattr("perfalign.flows.pregenerate.Pregeneration", lambda *a, **kw: made.append((a, kw)) or "p")
    monkeypatch.setattr("perfalign.alignment.models.resolve_model", lambda ref: f"/models/{ref}")
    cfg, run = load_config(profile="embedded"), RunState(tmp_path / "run")
    assert cfg.eval.parallel_models > 1 and pl.pregenerate_beside_align(cfg, run, resume=True) == "p"
    (make_config, base, align_dir, stages), kw = made[0]
    assert (base, align_dir, stages, kw) == ("/models/embedded", run.run_dir / "align",
                                             {"sft": "+SFT", "rlpf": "+RLPF", "dpa": "+DPA"}, {"since": None})
    one = dataclasses.replace(cfg, eval=dataclasses.replace(cfg.eval, parallel_models=1))
    assert pl.pregenerate_beside_align(one, run, resume=False) is None and len(made) == 1  # a GPU profile: not here
