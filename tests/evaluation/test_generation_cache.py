"""The evaluation's generation cache: a model's responses are reused only for the same files, the
same prompts and the same sampling settings (what sampling again would give); the evaluation
answers from it without loading the model, and stores what it samples."""
import importlib

import pytest

from perfalign.evaluation.config import EvalConfig, ModelSpec
from perfalign.evaluation.generation import cached_generations, generation_key
from perfalign.evaluation.records import EvalPrompt

ev = importlib.import_module("perfalign.evaluation.evaluate")  # the module (the package exports the function)


@pytest.fixture
def model(tmp_path, monkeypatch):
    monkeypatch.setattr("perfalign.common.paths.cache_root", lambda: tmp_path / "cache")
    d = tmp_path / "model"
    d.mkdir()
    (d / "config.json").write_text("{}")
    (d / "model.safetensors").write_bytes(b"weights")
    (d / "trainer").mkdir()  # checkpoints: not the model
    return d


def prompt(text="Write it faster."):
    return EvalPrompt(task="contests", prompt_id="p1", text=text, language="cpp", timing="cpu", spec=None)


def test_the_key_follows_weights_prompts_and_sampling(model):
    spec, cfg = ModelSpec("m", str(model)), EvalConfig(num_samples=2)
    key = generation_key(spec, cfg, [prompt()])
    other = EvalConfig(num_samples=2, omp_threads=7)  # a setting of the scoring, not of sampling
    assert key == generation_key(ModelSpec("other label", str(model)), other, [prompt()])
    assert key != generation_key(spec, EvalConfig(num_samples=3), [prompt()])
    assert key != generation_key(spec, EvalConfig(num_samples=2, temperature=0.0), [prompt()])
    assert key != generation_key(spec, cfg, [prompt("Write it slower.")])
    (model / "trainer" / "checkpoint-1").write_text("x")
    assert key == generation_key(spec, cfg, [prompt()])
    (model / "model.safetensors").write_bytes(b"trained")
    assert key != generation_key(spec, cfg, [prompt()])
    assert generation_key(ModelSpec("o", "oracle:reference"), cfg, [prompt()]) is None
    assert generation_key(ModelSpec("hub", "org/some-model"), cfg, [prompt()]) is None


def test_sampled_once_then_answered_from_the_cache(model, monkeypatch):
    calls = []

    class Fake:
        def generate(self, prompts, n):
            calls.append(len(prompts))
            return [[f"answer {i}"] * n for i in range(len(prompts))]

    monkeypatch.setattr(ev, "make_generator", lambda spec, config: Fake())
    spec, cfg = ModelSpec("m", str(model)), EvalConfig(num_samples=2)
    first, _ = ev._generate(spec, cfg, [prompt()])
    again, _ = ev._generate(ModelSpec("m2", str(model)), cfg, [prompt()])
    assert first == again == [["answer 0", "answer 0"]] and calls == [1]
    assert cached_generations(generation_key(spec, cfg, [prompt()]))[0] == first
    ev._generate(spec, EvalConfig(num_samples=3), [prompt()])  # other settings: sampled again
    assert calls == [1, 1]


def test_what_is_cached_is_what_sampling_again_gives(tmp_path, monkeypatch):
    """The cache's premise on the real tiny model: ``pregenerate`` (what runs beside align) stores
    exactly what a fresh sampling of the same model, prompts and settings returns."""
    from perfalign.alignment.models import embedded_base_model
    from perfalign.evaluation.generation import make_generator
    from perfalign.evaluation.tasks.registry import load_tasks

    base = ModelSpec("base", str(embedded_base_model()))  # the shared cache's tiny model
    monkeypatch.setattr("perfalign.common.paths.cache_root", lambda: tmp_path / "cache")
    cfg = EvalConfig(models=[base], tasks=("pareval",), pareval_models=("serial",), max_prompts_per_task=2,
                     num_samples=2, max_new_tokens=16, torch_threads=1, problem_size="reduced")
    prompts, _ = load_tasks(cfg)
    ev.pregenerate(base, cfg)
    stored = cached_generations(generation_key(base, cfg, prompts))
    assert stored is not None and len(stored[0]) == len(prompts) == 2
    assert make_generator(base, cfg).generate(prompts, cfg.num_samples) == stored[0]
