"""generate_synthetic: seeds -> prompts -> (cached) LLM answers -> verification in the sandbox ->
the `synthetic` / `synthetic_rejects` tables. Requests run on ``concurrency`` threads; parsing,
verification and table writes happen on the calling thread as answers arrive."""
from __future__ import annotations

import json
import logging
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from perfalign.common.concurrency import bounded_map
from perfalign.common.paths import SOURCE_ROOT, cache_root
from perfalign.common.progress import report
from perfalign.sandbox import Sandbox, SandboxSettings

from .cache import ResponseCache
from .cached_llm import CachedLLM, Usage
from .config import SynthConfig, find_api_key, resolve_backend
from .llm_clients import LLM_BACKENDS, LLMReply
from .pricing import estimate_cost, prices_for
from .prompt import build_prompt, language_for_index
from .response import MalformedResponse, parse_pair
from .sample_pairs import load_sample_pairs
from .seeds import Seed, load_seed_files, pick_seed
from .tables import SynthTables, write_card
from .throttle import AuthError, FatalRequestError, RateLimiter, TransientError
from .verify import MALFORMED, SandboxFault, Verification, verify_pair

log = logging.getLogger("perfalign.perfdata.synth")


@dataclass
class SynthProgress:
    done: int
    total: int
    kept: int
    rejected: int
    failed: int
    last: str = ""


@dataclass
class SynthSummary:
    backend: str
    model: str
    config_hash: str
    requested: int                 # n asked for
    target: int                    # n after capping (the sample has a fixed size)
    skipped_existing: int          # already in the tables from earlier runs
    attempted: int = 0
    kept: int = 0
    rejected: int = 0
    failed: int = 0                # request or sandbox failures: not recorded, retried on rerun
    reject_reasons: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    requests: int = 0              # LLM requests paid for in this run
    cache_hits: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    price_known: bool = True
    total_kept: int = 0            # rows of this config in the tables after the run
    total_rejected: int = 0
    using_sample: bool = False
    notes: list[str] = field(default_factory=list)
    tables: dict[str, str] = field(default_factory=dict)
    elapsed_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:  # the notes are not repeated: each was logged as it arose
        lines = [f"{self.backend}/{self.model} (config {self.config_hash}): {self.kept} kept, "
                 f"{self.rejected} rejected, {self.failed} failed of {self.attempted} new samples "
                 f"({self.skipped_existing} already done); tables now hold {self.total_kept} kept, "
                 f"{self.total_rejected} rejected"]
        if self.reject_reasons:
            lines.append("rejects: " + ", ".join(f"{k} {v}" for k, v in sorted(self.reject_reasons.items())))
        if not self.using_sample:
            cost = f"${self.cost_usd:.4f}" if self.price_known else "cost unknown (no price for this model)"
            lines.append(f"{self.requests} requests ({self.cache_hits} cached, {self.retries} retries), "
                         f"{self.prompt_tokens} prompt + {self.output_tokens} output tokens, {cost}")
        return "\n".join(lines)


@dataclass
class _Fetched:
    index: int
    language: str
    seed: Seed
    params: dict[str, Any]
    reply: LLMReply
    cache_key: str | None


def _sample_key(chash: str, index: int) -> str:
    return f"{chash}:{index:06d}"


def _request_seed(base: int, index: int) -> int:
    # Per-sample seed parameter: makes each request distinct (and reproducible where the
    # server honours seeds); Gemini takes an int32.
    return (base * 1_000_003 + index) % (2 ** 31)


def generate_synthetic(config: SynthConfig, out_dir: Path, *, progress: Callable[[SynthProgress], None] | None = None,
                       sandbox: Any = SandboxSettings()) -> SynthSummary:
    """Generates (or extends) the synthetic fast/slow pair tables under ``out_dir/data``.

    ``progress``: a callable taking SynthProgress (every event is also reported to
    common.progress as "synthetic pairs"). ``sandbox``: an object
    with the sandbox's ``run_many``, or the SandboxSettings to open one with (only when something
    needs verifying; pairs are verified on its workers). Raises AuthError if the endpoint rejects the key.
    """
    t0 = time.monotonic()
    config.validate()
    cfg, note = resolve_backend(config)
    out_dir = Path(out_dir)
    chash = cfg.config_hash()
    summary = SynthSummary(backend=cfg.backend, model=cfg.resolved_model(), config_hash=chash,
                           requested=config.n, target=config.n, skipped_existing=0,
                           using_sample=cfg.backend == "sample")
    if note:
        summary.notes.append(note)
        log.warning(note)

    pairs = load_sample_pairs(cfg.sample_dir) if cfg.backend == "sample" else None
    if pairs is not None and cfg.n > len(pairs):
        summary.target = len(pairs)
        summary.notes.append(f"the bundled sample has {len(pairs)} pairs: n capped from {cfg.n}")
        log.warning(summary.notes[-1])
    tables = SynthTables(out_dir)
    try:
        done = tables.keys()
        todo = [i for i in range(summary.target) if _sample_key(chash, i) not in done]
        summary.skipped_existing = summary.target - len(todo)
        usage = _run(cfg, chash, todo, pairs, tables, summary, progress, sandbox) if todo else Usage()
    finally:
        tables.close()
    write_card(out_dir)
    summary.total_kept = tables.count("synthetic", chash)
    summary.total_rejected = tables.count("synthetic_rejects", chash)
    summary.tables = {t: str(tables.path(t)) for t in ("synthetic", "synthetic_rejects")}
    summary.requests, summary.cache_hits, summary.retries = usage.requests, usage.cache_hits, usage.retries
    summary.prompt_tokens, summary.output_tokens = usage.prompt_tokens, usage.output_tokens
    if not summary.using_sample:
        pin, pout, summary.price_known = prices_for(summary.model, cfg.price_in_per_mtok, cfg.price_out_per_mtok)
        summary.cost_usd = estimate_cost(usage.prompt_tokens, usage.output_tokens, pin, pout)
    summary.elapsed_s = time.monotonic() - t0
    log.info("%s", summary)
    return summary


def _run(cfg: SynthConfig, chash: str, todo: list[int], pairs, tables: SynthTables, summary: SynthSummary,
         progress: Callable[[SynthProgress], None] | None, sandbox: Any) -> Usage:
    if pairs is not None:
        llm = None
        unguarded = lambda i: _fetch_sample(pairs[i], i)  # noqa: E731
        workers = 1
    else:
        files = load_seed_files(cfg.seeds, seed=cfg.seed, pool_size=cfg.seed_pool_size)
        backend = LLM_BACKENDS[cfg.backend](api_key=find_api_key(cfg), model=cfg.resolved_model(),
                                            base_url=cfg.base_url, timeout_s=cfg.request_timeout_s,
                                            api_version=cfg.api_version)
        llm = CachedLLM(backend, ResponseCache(cfg.cache_dir or cache_root() / "llm"),
                        RateLimiter(cfg.requests_per_minute), max_retries=cfg.max_retries,
                        backoff_base_s=cfg.backoff_base_s, backoff_max_s=cfg.backoff_max_s)
        unguarded = lambda i: _fetch_llm(cfg, llm, files, i)  # noqa: E731
        workers = cfg.concurrency

    # Set by the first AuthError so queued requests are not sent with a key known to be bad.
    auth_failed = threading.Event()

    def fetch(i: int) -> _Fetched | None:
        if auth_failed.is_set():
            return None  # not sent: the endpoint already refused the credentials
        try:
            return unguarded(i)
        except AuthError:
            auth_failed.set()
            raise

    sandboxes = [sandbox]

    def get_sandbox():  # created on first use: malformed answers need none
        if isinstance(sandboxes[0], SandboxSettings):
            sandboxes[0] = Sandbox.from_settings(sandboxes[0])
        return sandboxes[0]

    reasons: Counter[str] = Counter()
    # Do not wait for requests still in flight after an error or Ctrl-C.
    answers = bounded_map(fetch, todo, workers, wait_on_close=False, name="synth-llm")
    try:
        for index, fut in answers:
            try:
                fetched = fut.result()
                if fetched is None:
                    continue  # not sent: the AuthError behind it is raised when its own future is seen
                outcome = _process(cfg, chash, fetched, get_sandbox)
            except AuthError:
                raise
            except (TransientError, FatalRequestError, SandboxFault) as e:
                outcome = e
            summary.attempted += 1
            last = _record(index, outcome, tables, summary, reasons)
            report("synthetic pairs", summary.attempted, len(todo))  # common.progress: the CLI's bars, the run log
            if progress is not None:
                progress(SynthProgress(summary.attempted, len(todo), summary.kept, summary.rejected, summary.failed,
                                       last))
    finally:
        answers.close()
        summary.reject_reasons = dict(reasons)
        if sandbox is None and sandboxes[0] is not None:
            sandboxes[0].close()  # ours: release its slots
    return llm.usage if llm else Usage()


def _record(index: int, outcome, tables: SynthTables, summary: SynthSummary, reasons: Counter) -> str:
    """Writes one sample's row (or counts its failure); returns a progress line."""
    if isinstance(outcome, Exception):  # not recorded: a rerun retries it
        summary.failed += 1
        summary.failures.append(f"sample {index}: {type(outcome).__name__}: {outcome}")
        log.warning("sample %d failed: %s", index, outcome)
        return f"sample {index} failed"
    table, row = outcome
    tables.append(table, row)
    if table == "synthetic":
        summary.kept += 1
        return f"sample {index} kept ({row['speedup']:.1f}x)"
    summary.rejected += 1
    reasons[row["reason"]] += 1
    return f"sample {index} rejected: {row['reason']}"


def _fetch_llm(cfg: SynthConfig, llm: CachedLLM, files, index: int) -> _Fetched:
    language = language_for_index(cfg.languages, index)
    seed = pick_seed(files, cfg.seed, index)
    params = {**cfg.generation_params(), "seed": _request_seed(cfg.seed, index)}
    reply, key, _cached = llm.complete(build_prompt(seed, language), params)
    return _Fetched(index, language, seed, params, reply, key)


def _fetch_sample(pair, index: int) -> _Fetched:
    try:
        rel = pair.path.relative_to(SOURCE_ROOT).as_posix()
    except ValueError:
        rel = str(pair.path)
    seed = Seed("synth_sample", rel, 0, 0, "")
    return _Fetched(index, pair.language, seed, {}, LLMReply(text=pair.response_text()),
                    f"sample:{pair.name}")


def _process(cfg: SynthConfig, chash: str, f: _Fetched, get_sandbox) -> tuple[str, dict[str, Any]]:
    """Parses and verifies one answer; returns (table name, row)."""
    row: dict[str, Any] = {
        "key": _sample_key(chash, f.index), "sample_index": f.index, "config_hash": chash,
        "language": f.language,
        "seed_source": f.seed.source, "seed_path": f.seed.path,
        "seed_start_line": f.seed.start_line or None, "seed_end_line": f.seed.end_line or None,
        "seed_text": f.seed.text,
        "backend": cfg.backend, "model": cfg.resolved_model(), "model_version": f.reply.model_version,
        "generation_params": json.dumps(f.params, sort_keys=True),
        "cache_key": f.cache_key, "request_id": f.reply.request_id,
        "prompt_tokens": f.reply.prompt_tokens, "output_tokens": f.reply.output_tokens,
        "repeats": cfg.repeats, "min_speedup": cfg.min_speedup,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    raw = f.reply.text if f.reply.text else json.dumps(f.reply.raw or {"finish_reason": f.reply.finish_reason})
    try:
        draft = parse_pair(f.reply.text, f.language, max_inputs=cfg.max_inputs)
    except MalformedResponse as e:
        detail = str(e)
        if f.reply.finish_reason and f.reply.finish_reason.upper() not in ("STOP", "FINISH_REASON_UNSPECIFIED"):
            detail += f" (finish reason {f.reply.finish_reason})"
        return "synthetic_rejects", {**row, "reason": MALFORMED, "detail": detail, "raw_response": raw}
    row.update(problem=draft.problem, fast=draft.fast, slow=draft.slow, input_generator=draft.input_generator,
               test_inputs=draft.test_inputs)
    v: Verification = verify_pair(
        draft, get_sandbox(), repeats=cfg.repeats, time_limit_s=cfg.time_limit_s, min_speedup=cfg.min_speedup,
        generator_time_limit_s=cfg.generator_time_limit_s, max_inputs=cfg.max_inputs,
        max_input_bytes=cfg.max_input_bytes)
    row.update(
        test_inputs=v.inputs or draft.test_inputs,
        fast_cpu_times_s=v.fast_cpu_s or None, slow_cpu_times_s=v.slow_cpu_s or None,
        fast_cpu_time_s=v.fast_total_s, slow_cpu_time_s=v.slow_total_s, speedup=v.speedup,
        speedup_raw=v.speedup_raw, speedup_flags=v.speedup_flags or None,
        sandbox_backend=v.sandbox_backend, isolated=v.isolated,
    )
    if v.kept:
        return "synthetic", row
    return "synthetic_rejects", {**row, "reason": v.reason, "detail": v.detail, "raw_response": raw}
