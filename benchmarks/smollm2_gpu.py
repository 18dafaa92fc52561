"""SmolLM2-135M-Instruct (the small profile's model) on one device: batched sampling
throughput and training-step cost of full fine-tuning vs LoRA (peft), the two ways the small
profile can train. Self-contained (torch, transformers, peft, gguf): it runs on a lent GPU machine
that has no perfalign install, from the wheel's GGUF file.

    python benchmarks/smollm2_gpu.py --gguf PATH/SmolLM2-135M-Instruct.Q4_1.gguf [--device cuda] [--json out.json]

Sampling: the RLPF/evaluation settings (top-k 0, top-p 1, temperature 1) on chat-template prompts,
``--new-tokens`` per sequence, batches of 1..N; tokens/s counts generated tokens up to EOS.
Training: AdamW steps on batches of ``--batch`` x ``--seq-len`` tokens (bf16 autocast on CUDA,
fp32 on CPU), after two warm-up steps: seconds per step, tokens/s, peak memory.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch

PROMPTS = ["Write a C++ function that returns the sum of an array of integers as fast as possible.",
           "Write a Python program that reads n from stdin and prints the sum of 1..n.",
           "Optimize this loop: for (int i = 0; i < n; ++i) for (int j = 0; j < n; ++j) c[i] += a[i*n+j] * b[j];",
           "Write a fast function that counts the primes below n."]


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def load(gguf: Path, device: str):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    if tok.pad_token is None or tok.pad_token_id == tok.eos_token_id:
        tok.pad_token = "<|endoftext|>"  # pad != EOS, as alignment.models does for this model
    try:
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    except TypeError:  # transformers < 4.56 names it torch_dtype
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, torch_dtype=torch.float32)
    if hasattr(model.config, "quantization_config"):  # dequantized: a plain fp32 model from here on
        del model.config.quantization_config
    model.hf_quantizer, model.is_quantized = None, False
    return tok, model.to(device)


def sampling(tok, model, device: str, batches: list[int], new_tokens: int) -> list[dict]:
    tok.padding_side = "left"
    out = []
    dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    model = model.to(dtype).eval()
    for b in batches:
        texts = [tok.apply_chat_template([{"role": "user", "content": PROMPTS[i % len(PROMPTS)]}], tokenize=False,
                                         add_generation_prompt=True) for i in range(b)]
        enc = tok(texts, return_tensors="pt", padding=True).to(device)
        torch.manual_seed(0)
        model.generate(**enc, max_new_tokens=8, do_sample=True, top_k=0, top_p=1.0, pad_token_id=tok.pad_token_id)
        sync(device)
        t = time.perf_counter()
        gen = model.generate(**enc, max_new_tokens=new_tokens, do_sample=True, top_k=0, top_p=1.0, temperature=1.0,
                             pad_token_id=tok.pad_token_id)
        sync(device)
        dt = time.perf_counter() - t
        new = gen[:, enc["input_ids"].shape[1]:]
        produced = int(sum(int((row != tok.pad_token_id).sum()) for row in new))
        out.append({"batch": b, "seconds": round(dt, 3), "tokens": produced, "tokens_per_s": round(produced / dt, 1)})
        print(f"sampling batch {b:3d}: {produced:6d} tokens in {dt:6.2f} s = {produced / dt:8.1f} tok/s", flush=True)
    return out


def training(model_fn, device: str, batch: int, seq_len: int, steps: int, lora: int) -> dict:
    model = model_fn().float().train()
    if lora:
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(r=lora, lora_alpha=2 * lora, target_modules="all-linear",
                                                 task_type="CAUSAL_LM"))
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-5)
    ids = torch.randint(100, 40000, (batch, seq_len), device=device)
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    times = []
    for i in range(steps + 2):
        sync(device)
        t = time.perf_counter()
        with torch.autocast(device.split(":")[0], dtype=torch.bfloat16, enabled=device.startswith("cuda")):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        sync(device)
        if i >= 2:
            times.append(time.perf_counter() - t)
    s = statistics.median(times)
    peak = torch.cuda.max_memory_allocated() / 2**30 if device.startswith("cuda") else None
    res = {"mode": f"lora{lora}" if lora else "full", "trainable": sum(p.numel() for p in params),
           "seconds_per_step": round(s, 4), "tokens_per_s": round(batch * seq_len / s, 1),
           "peak_gb": round(peak, 2) if peak else None, "batch": batch, "seq_len": seq_len, "steps": steps}
    print(f"training {res['mode']:7s}: {s * 1000:8.1f} ms/step, {res['tokens_per_s']:9.1f} tok/s, "
          f"trainable {res['trainable']:,}, peak {res['peak_gb']} GB", flush=True)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gguf", type=Path, required=True)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--batches", default="1,8,32,64")
    ap.add_argument("--new-tokens", type=int, default=192)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq-len", type=int, default=512)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    t0 = time.perf_counter()
    tok, model = load(args.gguf, args.device)
    info = {"device": torch.cuda.get_device_name() if args.device.startswith("cuda") else "cpu",
            "torch": torch.__version__, "load_s": round(time.perf_counter() - t0, 1),
            "params": sum(p.numel() for p in model.parameters())}
    print(info, flush=True)
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}

    def fresh():
        model.load_state_dict(state)
        return model

    info["sampling"] = sampling(tok, model, args.device, [int(b) for b in args.batches.split(",")], args.new_tokens)
    # full first: LoRA wraps the model in place (last)
    info["training"] = [training(fresh, args.device, args.batch, args.seq_len, args.steps, lora)
                        for lora in (0, 16)]
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(info, indent=1))


if __name__ == "__main__":
    main()
