"""CPU cost and movement of training steps of a registry model on the idiom task's SFT rows: LoRA
(the profile's rank and every linear layer) against full fine-tuning (AdamW, every parameter), an
SFT step and a DPA step (Eq. 7's policy and reference passes over a fast/slow pair) each, and how
far a few SFT steps move the held-out references' loss per CPU-second. Prints one JSON line per
measurement, then a summary.

    nice -n 5 .venv/bin/python benchmarks/qwen_step_cost.py --steps 4 --batch 4
"""
from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _rows(tok, insts, kind: str) -> list[str]:
    from perfalign.alignment.prompting import model_prompt
    from perfalign.common.prompts import format_response

    return [model_prompt(tok, i.prompt) + format_response(i.program(kind), "python3") + tok.eos_token for i in insts]


def _nll(model, tok, texts: list[str]):
    """Mean per-token NLL of the texts (prompt tokens included: a fixed set, compared before and after)."""
    enc = tok(texts, return_tensors="pt", padding=True)
    labels = enc["input_ids"].masked_fill(enc["attention_mask"] == 0, -100)
    return model(**enc, labels=labels).loss, int(enc["attention_mask"].sum())


def _seq_logp(model, tok, texts):
    import torch

    enc = tok(texts, return_tensors="pt", padding=True)
    logits = model(**enc).logits[:, :-1]
    ids = enc["input_ids"][:, 1:]
    lp = torch.log_softmax(logits, -1).gather(-1, ids[..., None])[..., 0]
    return (lp * enc["attention_mask"][:, 1:]).sum(-1)


def measure(mode: str, args, tok, train, held) -> dict:
    import torch

    from perfalign.alignment.models import load_causal_lm

    model = load_causal_lm(args.model, tokenizer=tok)
    if mode == "lora":
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(r=args.lora_r, lora_alpha=2 * args.lora_r,
                                                 target_modules="all-linear", task_type="CAUSAL_LM"))
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=args.lr_lora if mode == "lora" else args.lr_full, foreach=False)
    held_texts = _rows(tok, held, "fast") + _rows(tok, held, "slow")
    with torch.no_grad():
        before = float(_nll(model, tok, held_texts)[0])
    texts = [t for k in ("fast", "slow") for t in _rows(tok, train, k)]
    steps = []
    for s in range(args.steps):
        batch = texts[s * args.batch:(s + 1) * args.batch]
        w, c = time.time(), time.process_time()
        loss, ntok = _nll(model, tok, batch)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        steps.append({"cpu_s": time.process_time() - c, "wall_s": time.time() - w, "tokens": ntok,
                      "loss": float(loss)})
        print(json.dumps({"mode": mode, "stage": "sft", "step": s, **steps[-1]}), flush=True)
    with torch.no_grad():
        after = float(_nll(model, tok, held_texts)[0])
    # one DPA step: policy log-probs of fast and slow (with grad), the reference's without
    pairs = list(zip(_rows(tok, train[:args.pairs], "fast"), _rows(tok, train[:args.pairs], "slow")))
    w, c = time.time(), time.process_time()
    with torch.no_grad():
        if mode == "lora":
            with model.disable_adapter():
                ref = _seq_logp(model, tok, [f for f, _ in pairs]) - _seq_logp(model, tok, [s for _, s in pairs])
        else:  # full fine-tuning keeps a frozen copy; its forward pass is the same cost as this one
            ref = _seq_logp(model, tok, [f for f, _ in pairs]) - _seq_logp(model, tok, [s for _, s in pairs])
    pol = _seq_logp(model, tok, [f for f, _ in pairs]) - _seq_logp(model, tok, [s for _, s in pairs])
    loss = -torch.nn.functional.logsigmoid(0.1 * (pol - ref)).mean()
    loss.backward()
    opt.step()
    dpa = {"cpu_s": time.process_time() - c, "wall_s": time.time() - w, "pairs": len(pairs)}
    print(json.dumps({"mode": mode, "stage": "dpa", **dpa}), flush=True)
    timed = steps[1:] or steps  # the first step pays one-off allocation
    cpu = sum(s["cpu_s"] for s in timed) / len(timed)
    return {"mode": mode, "trainable_params": sum(p.numel() for p in params),
            "sft_step_cpu_s": round(cpu, 1), "sft_first_step_cpu_s": round(steps[0]["cpu_s"], 1),
            "sft_tokens_per_step": round(sum(s["tokens"] for s in steps) / len(steps)),
            "heldout_nll_before": round(before, 4), "heldout_nll_after": round(after, 4),
            "nll_drop_per_cpu_s": round((before - after) / sum(s["cpu_s"] for s in steps), 5),
            "dpa_step_cpu_s": round(dpa["cpu_s"], 1), "dpa_pairs_per_step": len(pairs)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="qwen2.5-coder-0.5b", help="registry name or model directory")
    ap.add_argument("--modes", nargs="+", default=["lora", "full"], choices=("lora", "full"))
    ap.add_argument("--steps", type=int, default=4, help="SFT steps per mode")
    ap.add_argument("--batch", type=int, default=4, help="SFT rows per step (the profile's batch)")
    ap.add_argument("--pairs", type=int, default=2, help="fast/slow pairs per DPA step (the profile's batch)")
    ap.add_argument("--lora-r", type=int, default=16)
    ap.add_argument("--lr-lora", type=float, default=2e-4, help="the qwen-0.5b profile's SFT rate")
    ap.add_argument("--lr-full", type=float, default=1e-5)
    ap.add_argument("--threads", type=int, default=2, help="torch threads")
    a = ap.parse_args()

    import random

    import torch

    from perfalign.alignment.models import load_tokenizer
    from perfalign.perfdata import idioms

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    tok = load_tokenizer(a.model, padding_side="right")
    train, held = idioms.instances()
    train = random.Random(0).sample(train, len(train))
    out = [measure(m, a, tok, train, held[::4]) for m in a.modes]
    print(json.dumps({"summary": out, "threads": a.threads, "load": os.getloadavg()}), flush=True)


if __name__ == "__main__":
    main()
