"""What a model is shown for a Listing 1 prompt (common.prompts), one function for every stage
and for evaluation, so a model is trained and evaluated on the same text:

* an instruct model (its tokenizer has a chat template: SmolLM2-Instruct) gets the instruction as
  the user's turn of its template, ending with the template's generation prompt; a base model
  (no template; alignment.models.LISTING1_MODELS drop theirs) gets Listing 1 as is;
* a prompt over its token budget loses the end of its problem statement (marked ``[...]``), never
  the request (language line, slow code to optimize) or the generation prompt; one whose request
  alone does not fit raises ``PromptTooLong``.

Text that is not a Listing 1 prompt (already rendered, or free text) is returned unchanged.
"""
from __future__ import annotations

from perfalign.common.prompts import Listing1, parse_listing1

TRUNCATION_MARK = "[...]"


class PromptTooLong(ValueError):
    pass


def render(tokenizer, parts: Listing1) -> str:
    if not getattr(tokenizer, "chat_template", None):
        return parts.text()
    return tokenizer.apply_chat_template([{"role": "user", "content": parts.user_message()}], tokenize=False,
                                         add_generation_prompt=True)


def prompt_tokens(tokenizer, text: str) -> int:
    """Tokens of ``text`` as the trainers and ``generate`` see it (special tokens added)."""
    return len(tokenizer(text)["input_ids"])


def model_prompt(tokenizer, prompt: str, max_tokens: int | None = None) -> str:
    """The text ``tokenizer``'s model is given for ``prompt``, within ``max_tokens`` (module doc)."""
    parts = parse_listing1(prompt)
    if parts is None:
        return prompt
    text = render(tokenizer, parts)
    if max_tokens is None or prompt_tokens(tokenizer, text) <= max_tokens:
        return text
    fixed = prompt_tokens(tokenizer, render(tokenizer, Listing1(TRUNCATION_MARK, parts.request)))
    if fixed > max_tokens:
        raise PromptTooLong(f"the prompt's request alone takes {fixed} tokens, over the budget of {max_tokens}")
    ids = tokenizer(parts.statement, add_special_tokens=False)["input_ids"]
    keep = min(len(ids), max_tokens - fixed)
    while keep > 0:  # token merges at the cut can add a token or two: shrink until it fits
        cut = Listing1(tokenizer.decode(ids[:keep]).rstrip() + "\n" + TRUNCATION_MARK, parts.request)
        text = render(tokenizer, cut)
        over = prompt_tokens(tokenizer, text) - max_tokens
        if over <= 0:
            return text
        keep -= over
    return render(tokenizer, Listing1(TRUNCATION_MARK, parts.request))


def completion_tokens(tokenizer, completion: str) -> int:
    """Tokens of a completion after its prompt, with the EOS the trainers append."""
    return len(tokenizer(completion, add_special_tokens=False)["input_ids"]) + 1


PAIR_KEYS = ("chosen", "rejected")  # the completions of a preference record


def fit_rows(tokenizer, rows: list[dict], max_length: int | None,
             completion_keys: tuple[str, ...] = ("completion",)) -> tuple[list[dict], int]:
    """``rows`` with their ``prompt`` rendered for the model and shortened so prompt + the longest
    of ``completion_keys`` (+ EOS) fits ``max_length``; rows that cannot fit are dropped (counted)."""
    out, dropped = [], 0
    for r in rows:
        budget = None
        if max_length is not None:
            budget = max_length - max(completion_tokens(tokenizer, r[k]) for k in completion_keys)
        try:
            out.append({**r, "prompt": model_prompt(tokenizer, r["prompt"], budget)})
        except PromptTooLong:
            dropped += 1
    return out, dropped


def closed_fence(tokenizer, prompt_width: int):
    """generate()'s stopping criterion: a row is done once its new text (after ``prompt_width``
    tokens) holds a complete ``` block, what ``extract_code`` reads; the one rule of every sampler."""
    import torch
    from transformers import StoppingCriteria, StoppingCriteriaList

    class ClosedFence(StoppingCriteria):
        def __call__(self, input_ids, scores, **kwargs):
            texts = tokenizer.batch_decode(input_ids[:, prompt_width:], skip_special_tokens=True)
            return torch.tensor([t.count("```") >= 2 for t in texts], dtype=torch.bool, device=input_ids.device)

    return StoppingCriteriaList([ClosedFence()])
