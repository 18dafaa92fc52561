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
from .tasks import EvalPrompt

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
    """Samples from a causal LM through transformers' ``generate`` (real from_pretrained path)."""

    def __init__(self, ref: str, config: EvalConfig) -> None:
        self.ref, self.cfg = ref, config

    def generate(self, prompts: list[EvalPrompt], n: int) -> list[list[str]]:
        import torch

        from perfalign.alignment.models import load_causal_lm, load_tokenizer

        cfg = self.cfg
        threads = torch.get_num_threads()
        if cfg.torch_threads:  # on a shared 2-core host 1 thread is ~10x faster than 2
            torch.set_num_threads(cfg.torch_threads)
        on_gpu = torch.cuda.is_available()
        bf16 = on_gpu if cfg.bf16 is None else cfg.bf16
        tok = load_tokenizer(self.ref, padding_side="left")
        tok.truncation_side = "left"  # keep the end of an over-long prompt: the Response marker
        model = load_causal_lm(self.ref, bf16=bf16)
        model.to("cuda" if on_gpu else "cpu").eval()
        context = getattr(model.config, "max_position_embeddings", None)
        max_prompt = context - cfg.max_new_tokens if context else None
        if max_prompt is not None and max_prompt < 16:
            raise ValueError(f"{self.ref}: context {context} leaves no room for prompts with "
                             f"max_new_tokens={cfg.max_new_tokens}")
        texts = [p.text for p in prompts]
        if max_prompt is not None:
            long = [p.prompt_id for p, t in zip(prompts, texts) if len(tok(t)["input_ids"]) > max_prompt]
            if long:
                log.warning("%s: %d prompts longer than %d tokens keep only their end: %s", self.ref, len(long),
                            max_prompt, long[:5])
        # longest first, equal prompts adjacent: batches pad little
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        flat = [i for i in order for _ in range(n)]
        results: dict[int, list[str]] = {i: [] for i in range(len(texts))}
        torch.manual_seed(cfg.seed)
        try:
            for start in range(0, len(flat), cfg.batch_size):
                idx = flat[start:start + cfg.batch_size]
                enc = tok([texts[i] for i in idx], return_tensors="pt", padding=True,
                          truncation=max_prompt is not None, max_length=max_prompt).to(model.device)
                width = enc["input_ids"].shape[1]
                sampling = dict(do_sample=True, temperature=cfg.temperature, top_p=cfg.top_p, top_k=0) \
                    if cfg.temperature > 0 else dict(do_sample=False)
                with torch.no_grad():
                    out = model.generate(**enc, **sampling, max_new_tokens=cfg.max_new_tokens,
                                         pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
                                         stopping_criteria=_closed_fence(tok, width))
                for i, text in zip(idx, tok.batch_decode(out[:, width:], skip_special_tokens=True)):
                    results[i].append(text)
        finally:
            del model
            gc.collect()
            torch.set_num_threads(threads)
        return [results[i] for i in range(len(texts))]


def _closed_fence(tokenizer, prompt_width: int):
    """Stop a sequence once its response holds a complete ``` block (what extract_code reads)."""
    import torch
    from transformers import StoppingCriteria, StoppingCriteriaList

    class ClosedFence(StoppingCriteria):
        def __call__(self, input_ids, scores, **kwargs):
            texts = tokenizer.batch_decode(input_ids[:, prompt_width:], skip_special_tokens=True)
            return torch.tensor([t.count("```") >= 2 for t in texts], dtype=torch.bool, device=input_ids.device)

    return StoppingCriteriaList([ClosedFence()])


def make_generator(spec: ModelSpec, config: EvalConfig) -> Generator:
    return OracleGenerator(spec.oracle_mode) if spec.is_oracle else HFGenerator(spec.ref, config)
