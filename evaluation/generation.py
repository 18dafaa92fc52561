"""Sampling n responses per prompt: from a Hugging Face causal LM (any name, local directory or a
stage's run directory) or from the oracle pseudo-model (known solutions, to check the pipeline).

Generation follows §VII-D: nucleus sampling with temperature 0.2 and top-p 0.95 (top-k off),
batched; a sequence stops at EOS, at ``max_new_tokens``, or once its code block is closed.
"""
from __future__ import annotations

import gc
import logging
from typing import Protocol

from perfalign.common.prompts import format_response

from .config import EvalConfig, ModelSpec
from .records import EvalPrompt

log = logging.getLogger("perfalign.evaluation")


class Generator(Protocol):
    def generate(self, prompts: list[EvalPrompt], n: int) -> list[list[str]]:
        """``n`` responses for each prompt, in prompt order."""


class OracleGenerator:
    """A pseudo-model answering every prompt with its known solution of one kind: ``reference``
    (the baseline itself / the dataset's median submission), ``slow`` (the baseline doing its
    work twice / the slowest submission) or ``fast`` (a known faster solution)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def generate(self, prompts: list[EvalPrompt], n: int) -> list[list[str]]:
        out = []
        for p in prompts:
            code = p.references.get(self.mode)
            if code is None:
                raise ValueError(f"{p.task}/{p.prompt_id} has no {self.mode!r} reference solution")
            out.append([format_response(code, p.language)] * n)
        return out


class HFGenerator:
    """Samples from a causal LM through transformers' ``generate`` (real from_pretrained path):
    prompts rendered for the model (alignment.prompting: chat template for instruct models, long
    statements shortened), many sequences per ``generate`` call (left padding), throughput kept in
    ``stats`` (and logged)."""

    def __init__(self, ref: str, config: EvalConfig) -> None:
        self.ref, self.cfg = ref, config
        self.stats: dict = {}

    def generate(self, prompts: list[EvalPrompt], n: int) -> list[list[str]]:
        import torch

        from perfalign.alignment.models import load_causal_lm, load_tokenizer
        from perfalign.alignment.stage_config import quiet_libraries

        quiet_libraries()  # transformers' weight-loading bar would tear the terminal's progress bars
        cfg = self.cfg
        threads = torch.get_num_threads()
        if cfg.torch_threads:  # on a shared 2-core host 1 thread is ~10x faster than 2
            torch.set_num_threads(cfg.torch_threads)
        on_gpu = torch.cuda.is_available()
        bf16 = on_gpu if cfg.bf16 is None else cfg.bf16
        tok = load_tokenizer(self.ref, padding_side="left")
        model = load_causal_lm(self.ref, bf16=bf16, tokenizer=tok)
        model.to("cuda" if on_gpu else "cpu").eval()
        try:
            texts = model_prompts(tok, model, [p.text for p in prompts], cfg.max_new_tokens,
                                  [p.prompt_id for p in prompts], self.ref)
            sampling = dict(do_sample=True, temperature=cfg.temperature, top_p=cfg.top_p, top_k=0) \
                if cfg.temperature > 0 else dict(do_sample=False)
            torch.manual_seed(cfg.seed)
            asked = [i for i, t in enumerate(texts) if t is not None]
            out, self.stats = generate_batched(model, tok, [texts[i] for i in asked], n, cfg.batch_size,
                                               cfg.max_new_tokens, **sampling)
            log.info("%s: %d sequences, %d new tokens in %.1f s: %.1f tokens/s", self.ref, self.stats["sequences"],
                     self.stats["new_tokens"], self.stats["seconds"], self.stats["tokens_per_s"])
        finally:
            del model
            gc.collect()
            torch.set_num_threads(threads)
        results = [[""] * n for _ in texts]  # a prompt that cannot fit the context gets empty answers
        for i, r in zip(asked, out):
            results[i] = r
        return results


def model_prompts(tok, model, texts: list[str], max_new_tokens: int, ids: list[str], ref: str) -> list[str | None]:
    """Each prompt as the model is shown it, within its context minus ``max_new_tokens``
    (alignment.prompting.model_prompt); None for one whose request alone is too long."""
    from perfalign.alignment.prompting import PromptTooLong, model_prompt

    context = getattr(model.config, "max_position_embeddings", None)
    budget = context - max_new_tokens if context else None
    if budget is not None and budget < 16:
        raise ValueError(f"{ref}: context {context} leaves no room for prompts with max_new_tokens={max_new_tokens}")
    out, too_long = [], []
    for text, pid in zip(texts, ids):
        try:
            out.append(model_prompt(tok, text, budget))
        except PromptTooLong:
            out.append(None)
            too_long.append(pid)
    if too_long:
        log.warning("%s: %d prompts do not fit %d tokens even with their statement cut (empty answers): %s", ref,
                    len(too_long), budget, too_long[:5])
    return out


def generate_batched(model, tok, texts: list[str], n: int, batch_size: int, max_new_tokens: int,
                     **sampling) -> tuple[list[list[str]], dict]:
    """``n`` completions of each of ``texts`` (already rendered), ``batch_size`` sequences per
    ``generate`` call, left-padded (the tokenizer's padding side must be left); a sequence stops at
    EOS, at ``max_new_tokens`` or once its code block is closed. Returns the completions in prompt
    order and the throughput: new tokens (up to EOS) per second of generation."""
    import time

    import torch

    from perfalign.alignment.prompting import closed_fence

    if tok.padding_side != "left":
        raise ValueError("batched generation needs a left-padding tokenizer (load_tokenizer(..., padding_side='left'))")
    # longest first, equal prompts adjacent: batches pad little
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    flat = [i for i in order for _ in range(n)]
    results: dict[int, list[str]] = {i: [] for i in range(len(texts))}
    new_tokens, started = 0, time.perf_counter()
    for start in range(0, len(flat), batch_size):
        idx = flat[start:start + batch_size]
        enc = tok([texts[i] for i in idx], return_tensors="pt", padding=True).to(model.device)  # as TRL tokenizes
        width = enc["input_ids"].shape[1]
        with torch.no_grad():
            out = model.generate(**enc, **sampling, max_new_tokens=max_new_tokens, pad_token_id=tok.pad_token_id,
                                 eos_token_id=tok.eos_token_id, stopping_criteria=closed_fence(tok, width))
        gen = out[:, width:]
        # tokens each sequence produced: up to and including its EOS (the rest is padding)
        ended = (gen == tok.eos_token_id).long().cumsum(1)
        new_tokens += int(((ended == 0) | ((ended == 1) & (gen == tok.eos_token_id))).sum())
        for i, text in zip(idx, tok.batch_decode(gen, skip_special_tokens=True)):
            results[i].append(text)
    seconds = time.perf_counter() - started
    stats = {"prompts": len(texts), "sequences": len(flat), "new_tokens": new_tokens, "seconds": round(seconds, 3),
             "tokens_per_s": round(new_tokens / seconds, 2) if seconds > 0 else 0.0, "batch_size": batch_size}
    return [results[i] for i in range(len(texts))], stats


def make_generator(spec: ModelSpec, config: EvalConfig) -> Generator:
    return OracleGenerator(spec.oracle_mode) if spec.is_oracle else HFGenerator(spec.ref, config)


# The settings that decide what a model samples (with its weights and the prompts): a cached
# generation is reused only when all of them match, so it is what generating again would give.
SAMPLING_FIELDS = ("num_samples", "temperature", "top_p", "max_new_tokens", "batch_size", "seed", "bf16",
                   "torch_threads")


def generation_key(spec: ModelSpec, config: EvalConfig, prompts: list[EvalPrompt]) -> str | None:
    """The content key of a model's generations: its directory's files, the sampling settings and
    the prompts; None for what has no local files to hash (an oracle, a Hub name)."""
    import hashlib
    import json
    from pathlib import Path

    from perfalign.common.fileio import hash_files

    model = Path(spec.ref)
    if spec.is_oracle or not (model / "config.json").is_file():
        return None
    h = hashlib.sha256()
    hash_files(h, model, subfolders=False)  # not trainer/: its checkpoints
    h.update(json.dumps({k: getattr(config, k) for k in SAMPLING_FIELDS}, sort_keys=True).encode())
    h.update(json.dumps([(p.task, p.prompt_id, p.text) for p in prompts]).encode())
    return h.hexdigest()[:32]


def _cache_file(key: str):
    from perfalign.common.paths import cache_root

    return cache_root() / "generations" / f"{key}.json"


def cached_generations(key: str | None) -> tuple[list[list[str]], float] | None:
    """(responses, the seconds they took) stored under ``key``; None when not stored."""
    import json

    if key is None:
        return None
    try:
        data = json.loads(_cache_file(key).read_text())
        return data["responses"], float(data["seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store_generations(key: str | None, responses: list[list[str]], seconds: float) -> None:
    from perfalign.common.fileio import atomic_write_json

    if key is not None:
        atomic_write_json(_cache_file(key), {"responses": responses, "seconds": round(seconds, 2)})
