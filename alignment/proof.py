"""Whether alignment on the controlled task (perfdata.controlled) generalizes: a model's samples on
its prompts, executed in the sandbox (``execute_samples``) and classified incorrect, correct, or
correct and fast. ``experiments/alignment_proof.py`` trains on the task and reports these."""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from perfalign.perfdata.controlled import ControlledDataset, Instance, execute_samples
from perfalign.perfdata.perf import BuildSettings


@dataclass
class SampleReport:
    """Samples of one model on a set of prompts, executed in the sandbox."""

    samples: int
    fast_correct: int
    correct: int
    speedup_sum: float                      # sum over samples of baseline / runtime (0 when incorrect)
    distinct_programs: int
    per_problem: dict[str, dict[str, int]]
    flags: dict[str, int] = field(default_factory=dict)

    @property
    def fast_share(self) -> float:
        return self.fast_correct / self.samples if self.samples else 0.0

    @property
    def correct_share(self) -> float:
        return self.correct / self.samples if self.samples else 0.0

    @property
    def mean_speedup(self) -> float:
        return self.speedup_sum / self.samples if self.samples else 0.0

    def to_dict(self) -> dict:
        return {**asdict(self), "fast_correct_share": round(self.fast_share, 4),
                "correct_share": round(self.correct_share, 4), "mean_speedup": round(self.mean_speedup, 4)}


def classify_samples(task: ControlledDataset, samples: dict[str, list[str]], sandbox=None,
                     repeats: int = BuildSettings.repeats) -> SampleReport:
    """Every sample executed (``execute_samples``): incorrect, or correct and fast (under
    ``threshold_s``), and its speedup over the references' median through common.plausibility
    (incorrect samples count 0, as speedup_n@k)."""
    from perfalign.common.plausibility import speedup_ratio

    executed, distinct = execute_samples(task, samples, sandbox, repeats)
    per: dict[str, Counter] = {}
    flags: Counter = Counter()
    speedups = 0.0
    for pid, runs in executed.items():
        c = per.setdefault(pid, Counter())
        for _, res in runs:
            if res is None or not res.ok:
                c["incorrect"] += 1
                continue
            c["correct"] += 1
            if res.mean_cpu_time_s < task.threshold_s(pid):
                c["fast_correct"] += 1
            s = speedup_ratio(task.baseline_s(pid), res.mean_cpu_time_s)
            flags.update(s.flags)
            speedups += s.value or 0.0
    total = sum(per.values(), Counter())
    return SampleReport(sum(len(v) for v in samples.values()), total["fast_correct"], total["correct"], speedups,
                        distinct, {k: dict(v) for k, v in per.items()}, dict(flags))


def sample_and_classify(task: ControlledDataset, model_dir: str | Path, problems: list[Instance],
                        samples_per_prompt: int, seed: int = 0, temperature: float = 1.0, max_new_tokens: int = 96,
                        sandbox=None) -> SampleReport:
    """Sample the model on the instances' prompts (top-k 0, top-p 1 as in RLPF) and classify."""
    from .models import load_causal_lm, load_tokenizer
    from .prompting import model_prompt
    from .scoring import sample_completions

    tok = load_tokenizer(str(model_dir))
    model = load_causal_lm(str(model_dir), tokenizer=tok)
    prompts = [model_prompt(tok, i.prompt) for i in problems]  # the chat template of an instruct model
    outs = sample_completions(model, tok, prompts, max_new_tokens=max_new_tokens,
                              temperature=temperature, num_samples=samples_per_prompt, seed=seed)
    return classify_samples(task, {i.problem_id: o for i, o in zip(problems, outs)}, sandbox)
