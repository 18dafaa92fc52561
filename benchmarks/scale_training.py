"""What the paper's recipe costs at Deepseek-Coder 6.7B's size: a few training steps of each
stage on a randomly initialised model of its published architecture (LlamaForCausalLM, hidden
4096, 32 layers, 32 heads, intermediate 11008, vocab 32256, rope theta 100000; no weights are
downloaded), reporting tokens/s, peak memory and the projected wall time of the recipe.

Each stage's step is what its trainer does per batch (alignment/):
  sft     causal-LM forward + backward + AdamW on prompt+completion tokens (Eq. 1's loss)
  reward  sequence-classifier forward + backward on chosen and rejected (Eq. 2)
  dpa     policy forward + backward on chosen and rejected; pi_SFT's log-probs precomputed by
          one no-grad forward per pair, amortised into the step (Eq. 7)
  rlpf    generate a response, no-grad forwards of the reference, value and reward models,
          then PPO epochs of policy + value forward + backward (Eq. 4/6; the sandbox reward is
          not part of this measurement)

    # a GPU host (one H100): the real size; what fits there is chosen with the options
    python benchmarks/scale_training.py --scale deepseek-6.7b --device cuda --bf16 --gradient-checkpointing [--lora 16]
    # this CPU-only machine: the same code at a scaled-down width/depth (the vocabulary stays 32256)
    nice -n 10 .venv/bin/python benchmarks/scale_training.py --scale cpu-small --steps 3

The projection multiplies the recipe's token counts (flags; defaults estimated from the paper's
data sizes, printed with the result) by the measured seconds per token, divided by the number
of GPUs (linear scaling assumed, stated, not measured). A projection from the CPU-small scale is
only a check of the arithmetic: the 6.7B GPU figure is owed until this runs on a GPU.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

SCALES = {
    # Deepseek-Coder 6.7B's config.json (published architecture)
    "deepseek-6.7b": dict(hidden_size=4096, num_hidden_layers=32, num_attention_heads=32, intermediate_size=11008),
    # same family, same vocabulary, 1/16 the width and 1/8 the depth: fits a 2-core CPU
    "cpu-small": dict(hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=688),
}
COMMON = dict(vocab_size=32256, rope_theta=100000.0, max_position_embeddings=16384, rms_norm_eps=1e-6,
              num_key_value_heads=None, tie_word_embeddings=False, bos_token_id=32013, eos_token_id=32014,
              pad_token_id=32014)
STAGES = ("sft", "reward", "dpa", "rlpf")


@dataclass
class Recipe:
    """Token counts of the paper's recipe (§VII-B/C). Defaults: ~13.3k CodeContests training
    problems x ~2.5 languages x 2 samples, 10k synthetic pairs, split 40 / 60 (66 / 33); ~700
    tokens per prompt + completion, 1024-token RL responses. Override with the real counts."""

    sft_samples: int = 40_000
    sft_epochs: int = 3
    reward_pairs: int = 48_000
    dpa_pairs: int = 72_000
    rl_prompts: int = 24_000
    ppo_epochs: int = 4
    tokens_per_sample: int = 700
    rl_prompt_tokens: int = 400
    rl_response_tokens: int = 1024
    gpus: int = 4

    def tokens(self) -> dict[str, int]:
        """Training tokens each stage processes (the unit of the measured throughput)."""
        return {"sft": self.sft_samples * self.sft_epochs * self.tokens_per_sample,
                "reward": self.reward_pairs * 2 * self.tokens_per_sample,
                "dpa": self.dpa_pairs * 2 * self.tokens_per_sample,
                "rlpf": self.rl_prompts * (self.rl_prompt_tokens + self.rl_response_tokens)}


def build(scale: str, stage: str, args):
    from transformers import LlamaConfig, LlamaForCausalLM, LlamaForSequenceClassification

    cfg = LlamaConfig(**{**COMMON, **SCALES[scale]})
    cfg.num_key_value_heads = cfg.num_attention_heads
    cls = LlamaForCausalLM
    if stage == "reward":
        cls, cfg.num_labels = LlamaForSequenceClassification, 1
    torch.manual_seed(0)
    saved = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16 if args.bf16 else torch.float32)  # built in its dtype: no fp32 copy
    try:
        with torch.device(args.device):
            model = cls(cfg)
    finally:
        torch.set_default_dtype(saved)
    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    if args.fsdp:
        shard(model, args)
    if args.lora:
        try:
            from peft import LoraConfig, get_peft_model
        except ImportError:
            raise SystemExit("--lora needs peft: pip install 'perfalign[lora]'") from None

        model = get_peft_model(model, LoraConfig(r=args.lora, lora_alpha=2 * args.lora, task_type=(
            "SEQ_CLS" if stage == "reward" else "CAUSAL_LM"), target_modules=["q_proj", "k_proj", "v_proj", "o_proj"]))
    return model


def shard(model, args) -> None:
    """FSDP2 (``fully_shard``) per decoder layer, then the root, in a one-process group: on one GPU
    it shards nothing, but ``--fsdp cpu-offload`` keeps parameters, gradients and optimizer state in
    CPU memory and streams each layer to the GPU for its forward/backward (FSDP's CPU offload, as
    accelerate's ``fsdp_offload_params`` does)."""
    import torch.distributed as dist
    from torch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy, OffloadPolicy, fully_shard

    if not dist.is_initialized():
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29531")
        dist.init_process_group("nccl" if args.device.startswith("cuda") else "gloo", rank=0, world_size=1)
    policy = CPUOffloadPolicy() if args.fsdp == "cpu-offload" else OffloadPolicy()
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16 if args.bf16 else None)
    for layer in model.model.layers:
        fully_shard(layer, offload_policy=policy, mp_policy=mp)
    fully_shard(model, offload_policy=policy, mp_policy=mp)


def optimizer(model, args):
    params = [p for p in model.parameters() if p.requires_grad]
    if args.optim == "adamw8bit":
        import bitsandbytes as bnb  # GPU hosts only

        return bnb.optim.AdamW8bit(params, lr=1e-5)
    return torch.optim.AdamW(params, lr=1e-5)


def ids(batch: int, length: int, device) -> torch.Tensor:
    return torch.randint(100, 32000, (batch, length), device=device)


def step_fn(stage: str, args):
    """One training step of ``stage`` on random token ids; returns the training tokens it processed."""
    b, L, dev = args.batch, args.seq_len, args.device
    if stage in ("sft", "reward", "dpa"):
        model = build(args.scale, "reward" if stage == "reward" else "sft", args)
        opt = optimizer(model, args)

        def logps(x):
            lp = torch.log_softmax(model(input_ids=x).logits[:, :-1].float(), -1)
            return lp.gather(-1, x[:, 1:, None]).squeeze(-1).sum(1)

        def loss(x):
            if stage == "sft":
                return model(input_ids=x, labels=x).loss
            if stage == "reward":
                r = model(input_ids=x).logits.float()
                return (-torch.nn.functional.logsigmoid(r[:b] - r[b:] - 1.0)).mean()
            with torch.no_grad():  # dpa: the precompute pass, one per pair
                ref = logps(x)
            pol = logps(x) - ref
            return (-torch.nn.functional.logsigmoid(0.6 * (pol[:b] - pol[b:]) - 1.0)).mean()

        def step():
            x = ids(b if stage == "sft" else 2 * b, L, dev)  # reward, dpa: chosen and rejected
            loss(x).backward()
            opt.step(), opt.zero_grad(set_to_none=True)
            return x.numel()
        return step, [model]
    # rlpf: policy, reference, value and reward model, as TRL's PPO holds them
    policy, ref = build(args.scale, "sft", args), build(args.scale, "sft", args)
    value, rm = build(args.scale, "reward", args), build(args.scale, "reward", args)
    opt = optimizer(torch.nn.ModuleList([policy, value]), args)
    P, R = args.rl_prompt_len, args.rl_response_len

    def step():
        q = ids(b, P, dev)
        with torch.no_grad():
            seq = policy.generate(q, max_new_tokens=R, min_new_tokens=R, do_sample=True, top_k=0, top_p=1.0,
                                  pad_token_id=COMMON["pad_token_id"])
            ref(input_ids=seq), rm(input_ids=seq), value(input_ids=seq)
        for _ in range(args.ppo_epochs):
            lp = torch.log_softmax(policy(input_ids=seq).logits[:, P - 1:-1].float(), -1)
            loss = -lp.gather(-1, seq[:, P:, None]).mean() + value(input_ids=seq).logits.float().pow(2).mean()
            loss.backward()
            opt.step(), opt.zero_grad(set_to_none=True)
        return b * (P + R)
    return step, [policy, ref, value, rm]


def reset_peak_memory(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        return
    try:  # Linux: "5" resets the process's peak RSS (VmHWM) to its current RSS
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def peak_memory_gb(device: str) -> float:
    """GPU: peak allocated by torch. CPU: the process's peak RSS since the last reset (VmHWM),
    which includes the Python interpreter and libraries (~0.5 GB)."""
    if device.startswith("cuda"):
        return torch.cuda.max_memory_allocated() / 2**30
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def measure(stage: str, args) -> dict:
    import gc

    gc.collect()
    reset_peak_memory(args.device)
    t0 = time.perf_counter()
    step, models = step_fn(stage, args)
    build_s = time.perf_counter() - t0
    params = sum(p.numel() for p in models[0].parameters())
    trainable = sum(p.numel() for p in models[0].parameters() if p.requires_grad)
    step()  # warm-up (allocations, kernels)
    if args.device.startswith("cuda"):
        torch.cuda.synchronize()
    t, tokens = time.perf_counter(), 0
    for _ in range(args.steps):
        tokens += step()
    if args.device.startswith("cuda"):
        torch.cuda.synchronize()
    secs = time.perf_counter() - t
    out = {"stage": stage, "parameters": params, "trainable": trainable, "models_held": len(models),
           "build_s": round(build_s, 1), "steps": args.steps, "tokens": tokens, "seconds": round(secs, 2),
           "tokens_per_s": round(tokens / secs, 1), "peak_memory_gb": round(peak_memory_gb(args.device), 2)}
    del step, models
    return out


def analytic_memory_gb(params: float = 6.74e9) -> dict[str, float]:
    """Bytes per parameter of the options a single 80 GB GPU could use (arithmetic, not measured):
    bf16 weights and grads + fp32 AdamW moments (+ an fp32 master copy under mixed precision)."""
    return {"full_adamw_bf16_mixed": params * (2 + 2 + 8 + 4) / 1e9, "full_adamw_pure_bf16": params * (2 + 2 + 8) / 1e9,
            "full_adamw8bit_bf16": params * (2 + 2 + 2) / 1e9, "lora_frozen_bf16_weights": params * 2 / 1e9,
            "fsdp_4gpu_per_gpu_mixed": params * 16 / 4 / 1e9}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", choices=sorted(SCALES), default="cpu-small")
    ap.add_argument("--stages", default=",".join(STAGES))
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--bf16", action="store_true")
    ap.add_argument("--gradient-checkpointing", action="store_true")
    ap.add_argument("--lora", type=int, default=0, help="LoRA rank via peft (0: full fine-tuning)")
    ap.add_argument("--optim", choices=("adamw", "adamw8bit"), default="adamw")
    ap.add_argument("--fsdp", choices=("", "shard", "cpu-offload"), default="",
                    help="wrap in FSDP2 (one process); cpu-offload keeps weights, grads and AdamW state in CPU memory")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--batch", type=int, default=1, help="per-device batch (paper: 1 per GPU)")
    ap.add_argument("--seq-len", type=int, default=None, help="tokens per sample (default: the recipe's)")
    ap.add_argument("--rl-prompt-len", type=int, default=None)
    ap.add_argument("--rl-response-len", type=int, default=None)
    ap.add_argument("--ppo-epochs", type=int, default=4)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json", type=Path, default=None, help="also write the result here")
    for f in Recipe.__dataclass_fields__:
        ap.add_argument(f"--recipe-{f.replace('_', '-')}", dest=f"recipe_{f}", type=int, default=None)
    args = ap.parse_args()
    recipe = Recipe(**{f: getattr(args, f"recipe_{f}") for f in Recipe.__dataclass_fields__
                       if getattr(args, f"recipe_{f}") is not None})
    small = args.scale == "cpu-small"
    args.seq_len = args.seq_len or (256 if small else recipe.tokens_per_sample)
    args.rl_prompt_len = args.rl_prompt_len or (64 if small else recipe.rl_prompt_tokens)
    args.rl_response_len = args.rl_response_len or (32 if small else recipe.rl_response_tokens)
    if args.threads:
        torch.set_num_threads(args.threads)
    results = [measure(s, args) for s in args.stages.split(",")]
    tokens = recipe.tokens()
    hours = {r["stage"]: tokens[r["stage"]] / r["tokens_per_s"] / recipe.gpus / 3600 for r in results}
    report = {"scale": args.scale, "architecture": {**COMMON, **SCALES[args.scale]}, "device": args.device,
              "torch": torch.__version__, "threads": torch.get_num_threads(),
              "options": {k: getattr(args, k) for k in ("bf16", "gradient_checkpointing", "lora", "optim", "fsdp",
                                                        "batch",
                                                        "seq_len", "rl_prompt_len", "rl_response_len", "ppo_epochs")},
              "results": results, "recipe": asdict(recipe), "recipe_tokens": tokens,
              "projected_hours_on_recipe_gpus": {k: round(v, 2) for k, v in hours.items()},
              "projected_total_hours": round(sum(hours.values()), 2),
              "analytic_memory_gb_6.7b": {k: round(v, 1) for k, v in analytic_memory_gb().items()}}
    print(f"scale {args.scale} on {args.device} ({torch.get_num_threads()} threads), options {report['options']}")
    print(f"{'stage':<7} {'params':>12} {'trainable':>12} {'tokens/s':>10} {'peak GB':>8} {'projected h':>12}")
    for r in results:
        print(f"{r['stage']:<7} {r['parameters']:>12,} {r['trainable']:>12,} {r['tokens_per_s']:>10,.1f} "
              f"{r['peak_memory_gb']:>8.2f} {hours[r['stage']]:>12.1f}")
    print(f"projected recipe wall time at this scale: {report['projected_total_hours']:.1f} h on {recipe.gpus} devices "
          f"(recipe tokens {tokens}; linear scaling assumed)")
    if small:
        print("CPU-small scale: this checks the code and the arithmetic; the 6.7B GPU figure is owed.")
    print("6.7B memory by arithmetic (GB): " + json.dumps(report["analytic_memory_gb_6.7b"]))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
