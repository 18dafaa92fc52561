"""Forward passes the metrics need: completion log-probs (perplexity, DPA), reward-model scores.
Tokenization mirrors TRL's (prompt, then prompt + completion + EOS)."""
from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class CompletionLogprobs:
    sums: torch.Tensor            # (n,) summed log-probs of each completion (incl. EOS)
    counts: torch.Tensor          # (n,) completion tokens scored
    tokens: list[torch.Tensor]    # per-sample token log-probs


def _encode(tokenizer, prompt: str, completion: str, max_length: int | None, add_eos: bool) -> tuple[list[int], int]:
    """(ids of prompt + completion, index where the completion starts)."""
    if add_eos and not completion.endswith(tokenizer.eos_token):
        completion = completion + tokenizer.eos_token
    p_ids = tokenizer(prompt)["input_ids"]  # special tokens (a BOS) as TRL adds them
    full = tokenizer(prompt + completion)["input_ids"]
    if full[:len(p_ids)] != p_ids:  # merge across the boundary: score the completion on its own
        full = p_ids + tokenizer(completion, add_special_tokens=False)["input_ids"]
    if max_length is not None:
        full = full[:max_length]
    return full, len(p_ids)


@torch.no_grad()
def completion_logprobs(model, tokenizer, prompts: list[str], completions: list[str], batch_size: int = 8,
                        max_length: int | None = None, add_eos: bool = True) -> CompletionLogprobs:
    """log p(completion | prompt) under ``model``, token by token."""
    model.eval()
    device = next(model.parameters()).device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    sums, counts, tokens = [], [], []
    for i in range(0, len(prompts), batch_size):
        enc = [_encode(tokenizer, p, c, max_length, add_eos) for p, c in zip(prompts[i:i + batch_size],
                                                                             completions[i:i + batch_size])]
        width = max(len(ids) for ids, _ in enc)
        input_ids = torch.full((len(enc), width), pad, dtype=torch.long)
        attn = torch.zeros((len(enc), width), dtype=torch.long)
        for j, (ids, _) in enumerate(enc):
            input_ids[j, :len(ids)] = torch.tensor(ids)
            attn[j, :len(ids)] = 1
        logits = model(input_ids=input_ids.to(device), attention_mask=attn.to(device)).logits.float()
        logps = torch.log_softmax(logits[:, :-1], dim=-1).gather(-1, input_ids[:, 1:, None].to(device)).squeeze(-1)
        for j, (ids, start) in enumerate(enc):
            tok = logps[j, max(start - 1, 0):len(ids) - 1].cpu()
            tokens.append(tok)
            sums.append(tok.sum())
            counts.append(tok.numel())
    return CompletionLogprobs(torch.stack(sums) if sums else torch.zeros(0), torch.tensor(counts), tokens)


@torch.no_grad()
def reward_scores(reward_model, tokenizer, prompts: list[str], completions: list[str], batch_size: int = 8,
                  max_length: int | None = None) -> torch.Tensor:
    """r_theta(p, d) of a one-logit sequence classifier on prompt + completion + EOS (as trained)."""
    reward_model.eval()
    device = next(reward_model.parameters()).device
    pad = tokenizer.pad_token_id
    out = []
    for i in range(0, len(prompts), batch_size):
        enc = [_encode(tokenizer, p, c, max_length, True)[0] for p, c in zip(prompts[i:i + batch_size],
                                                                            completions[i:i + batch_size])]
        width = max(len(ids) for ids in enc)
        input_ids = torch.full((len(enc), width), pad, dtype=torch.long)
        attn = torch.zeros((len(enc), width), dtype=torch.long)
        for j, ids in enumerate(enc):
            input_ids[j, :len(ids)] = torch.tensor(ids)
            attn[j, :len(ids)] = 1
        logits = reward_model(input_ids=input_ids.to(device), attention_mask=attn.to(device)).logits
        out.append(logits[:, 0].float().cpu())
    return torch.cat(out) if out else torch.zeros(0)
