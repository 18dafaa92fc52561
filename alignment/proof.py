"""A model's samples on the controlled task's prompts (perfdata.controlled), each executed in the
sandbox (``execute_samples``, the one measurement path) and labelled by its instance's threshold:
fast & correct, slow & correct, incorrect, or no code. ``experiments/alignment_proof.py`` (the
arms, RFT and the pilot gate) samples and reports through this one path.

A prompt's samples are generated in one batch (top-k 0, top-p 1, as in RLPF), with the next
prompts' when ``prompts_per_batch`` > 1, each row cut at its closing fence, and appended one row per
sample (``ROW_KEYS``, with its text) to ``samples.jsonl`` as they are labelled: a killed run resumes
at the next batch. The batches are fixed on the given order, batch b seeded ``seed + b·P`` (prompt i
gets ``seed + i`` with P = 1): common random numbers across models."""
from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

from perfalign.perfdata.controlled import ControlledDataset, Instance, execute_samples
from perfalign.perfdata.perf import BuildSettings

from .prompting import closed_fence

LABELS = ("fast_correct", "slow_correct", "incorrect", "no_code")
# a sample's row in samples.jsonl; the files already recorded are read by these keys
ROW_KEYS = ("problem_id", "family", "sample", "seed", "temperature", "label", "verdict", "cpu_time_s", "threshold_s",
            "new_tokens", "prompt_generation", "text")


def label(result, threshold_s: float) -> str:
    """A sample's class from its sandbox result (None: no code in the text)."""
    if result is None:
        return "no_code"
    if not result.ok:
        return "incorrect"
    return "fast_correct" if result.mean_cpu_time_s < threshold_s else "slow_correct"


def _row(fields: dict) -> dict:
    return {k: fields[k] for k in ROW_KEYS if k in fields}


def labelled_rows(task: ControlledDataset, inst: Instance, texts: list[str], sandbox=None,
                  repeats: int = BuildSettings.repeats) -> list[dict]:
    """One row per sample of ``inst``'s prompt (without the sampler's keys): each text executed
    on the instance's tests and labelled."""
    pid, threshold = inst.problem_id, task.threshold_s(inst.problem_id)
    executed, _ = execute_samples(task, {pid: texts}, sandbox, repeats)
    return [_row({"problem_id": pid, "family": inst.family.name, "sample": j, "label": label(res, threshold),
                  "verdict": res.verdict.value if res is not None else None,
                  "cpu_time_s": res.mean_cpu_time_s if res is not None else None, "threshold_s": threshold,
                  "text": text})
            for j, (text, (_, res)) in enumerate(zip(texts, executed[pid]))]


def generate(model, tokenizer, prompts: str | list[str], n: int, temperature: float, max_new_tokens: int,
             seed: int) -> tuple[list[str], list[int]]:
    """``n`` samples of each prompt in one batch (top-k 0, top-p 1; left-padded, so several prompts
    share the batch), each cut at its closing fence; their texts and new-token counts, prompt by
    prompt."""
    import torch
    prompts = [prompts] if isinstance(prompts, str) else list(prompts)
    torch.manual_seed(seed)
    enc = tokenizer([p for p in prompts for _ in range(n)], return_tensors="pt", padding=True)
    plen = enc["input_ids"].shape[1]
    with torch.no_grad():
        out = model.generate(**enc, do_sample=True, temperature=temperature, top_k=0, top_p=1.0,
                             max_new_tokens=max_new_tokens, pad_token_id=tokenizer.pad_token_id,
                             eos_token_id=tokenizer.eos_token_id,
                             stopping_criteria=closed_fence(tokenizer, plen))
    new = out[:, plen:]
    lengths = [int((row != tokenizer.pad_token_id).sum()) for row in new]
    texts = tokenizer.batch_decode(new, skip_special_tokens=True)
    return [t[:fence_end(t)] for t in texts], lengths


def fence_end(text: str) -> int:
    """The end of the closing fence (the text's end when there is none)."""
    first = text.find("```")
    close = text.find("```", first + 3) if first >= 0 else -1
    return len(text) if close < 0 else close + 3


def interleaved(instances: list) -> list:
    """One instance of each family first, then the second of each, and so on (stable)."""
    seen: Counter = Counter()
    keyed = []
    for inst in instances:
        keyed.append((seen[inst.family.name], len(keyed), inst))
        seen[inst.family.name] += 1
    return [inst for *_, inst in sorted(keyed, key=lambda x: x[:2])]


def read_samples(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def written_prompts(path: Path, k: int) -> set[str]:
    """The problem ids with rows in ``path``. A file that does not end at a line's end was cut by a
    kill in the middle of an append: its last line, and the rows of the prompts left with fewer than
    ``k`` (the batch being written), are dropped in place, so those prompts are drawn again, from the
    same seed. A file that ends cleanly is read as it is (a prompt written with another k stays)."""
    text = path.read_text() if path.exists() else ""
    lines = text.splitlines()
    if not text or text.endswith("\n"):
        return {json.loads(line)["problem_id"] for line in lines if line.strip()}
    try:
        json.loads(lines[-1])
    except json.JSONDecodeError:
        lines.pop()
    rows = [json.loads(line) for line in lines if line.strip()]
    count = Counter(r["problem_id"] for r in rows)
    kept = [r for r in rows if count[r["problem_id"]] >= k]
    print(f"{path}: cut by a kill; dropped its last line and {len(rows) - len(kept)} rows of prompts left "
          f"incomplete", flush=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r) + "\n" for r in kept))
    tmp.replace(path)
    return {r["problem_id"] for r in kept}


def sample_and_label(task: ControlledDataset, model_name: str, out: Path, instances: list[Instance],
                     samples_per_prompt: int, temperature: float, max_new_tokens: int, seed: int = 0, sandbox=None,
                     threads: int = 1, prompts_per_batch: int = 1) -> list[dict]:
    """Sample and label every instance's prompt not yet in ``out/samples.jsonl``; all its rows."""
    by_id = {inst.problem_id: inst for inst in instances}

    def rows_of(pid: str, texts: list[str], meta: list[dict]) -> list[dict]:
        return [_row({**r, **m}) for r, m in zip(labelled_rows(task, by_id[pid], texts, sandbox), meta)]

    return sample_resumable(model_name, out, [(i.problem_id, i.prompt) for i in instances], samples_per_prompt,
                            temperature, max_new_tokens, seed, rows_of, threads, prompts_per_batch)


def sample_resumable(model_name: str, out: Path, prompts: list[tuple[str, str]], samples_per_prompt: int,
                     temperature: float, max_new_tokens: int, seed: int, rows_of, threads: int = 1,
                     prompts_per_batch: int = 1) -> list[dict]:
    """k samples per (problem id, prompt text) not yet in ``out/samples.jsonl``, ``prompts_per_batch``
    prompts sharing one batch cut at the closing fence. The batches are fixed on the whole list
    (prompts b·P .. b·P+P-1, seeded ``seed + b·P``: with P = 1, prompt i gets ``seed + i``), so every
    model, and a resumed run, draws the same random numbers for the same prompts. ``rows_of(problem_id,
    texts, meta)`` turns a prompt's texts (and per sample its seed, temperature, token count and its
    prompt's share of the batch's generation cost, ``meta``) into rows, appended per batch so a killed
    run resumes at the next. All the rows."""
    import torch

    from .models import load_causal_lm, load_tokenizer
    from .prompting import model_prompt

    if prompts_per_batch < 1:
        raise ValueError(f"prompts_per_batch must be >= 1, not {prompts_per_batch}")
    out.mkdir(parents=True, exist_ok=True)
    path = out / "samples.jsonl"
    done = written_prompts(path, samples_per_prompt)
    indexed = list(enumerate(prompts))
    batches = [indexed[b:b + prompts_per_batch] for b in range(0, len(indexed), prompts_per_batch)]
    todo = [batch for batch in batches if any(pid not in done for _, (pid, _) in batch)]
    if todo:
        torch.set_num_threads(threads)
        tok = load_tokenizer(model_name, padding_side="left")
        model = load_causal_lm(model_name, tokenizer=tok).eval()
    for batch in todo:
        first, k = batch[0][0], samples_per_prompt
        w0, c0 = time.time(), time.process_time()
        texts, lengths = generate(model, tok, [model_prompt(tok, prompt) for _, (_, prompt) in batch], k,
                                  temperature, max_new_tokens, seed + first)
        wall, cpu = time.time() - w0, time.process_time() - c0
        rows = []
        for j, (_, (pid, _)) in enumerate(batch):
            if pid in done:  # the same draw as before; only the prompts not yet written
                continue
            mine = lengths[j * k:(j + 1) * k]
            gen = {"wall_s": wall / len(batch), "cpu_s": cpu / len(batch), "new_tokens": sum(mine),
                   "batch_steps": max(lengths), "batch_prompts": len(batch)}
            rows += rows_of(pid, texts[j * k:(j + 1) * k], [{"seed": seed + first, "temperature": temperature,
                                                             "new_tokens": n, "prompt_generation": gen} for n in mine])
        with path.open("a") as f:
            f.write("".join(json.dumps(r) + "\n" for r in rows))  # one write: a kill cuts at most this batch
        print(f"{', '.join(pid for _, (pid, _) in batch)}: {Counter(r.get('label', r.get('verdict')) for r in rows)} "
              f"generated {sum(lengths)} tokens in {wall:.0f} s wall, {cpu:.0f} CPU-s", flush=True)
    return read_samples(path)
