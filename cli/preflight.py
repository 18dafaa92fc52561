"""Checks that run before any flow starts, each failing in one line that says what to do:
a Hub source that cannot be read (offline, unreachable, missing), a GPU stage without a GPU, a
production build without the judge environments.

Without them a Hub source offline costs 25 s of retries, every warning printed twice, then two
tracebacks; a GPU profile fails inside the first trainer, minutes in.
"""
from __future__ import annotations

import importlib
import logging
import os
from pathlib import Path
from typing import Any, Iterable

log = logging.getLogger("perfalign.cli.preflight")
HUB_TIMEOUT_S = 10.0  # one request, no retries: a reachable Hub answers in well under a second


class PreflightError(RuntimeError):
    """A check failed: the message is the one line the user sees."""


def _offline() -> bool:
    # huggingface_hub's own rule, read now (its constant is read once, at import)
    return any((os.environ.get(v) or "").upper() in ("1", "ON", "YES", "TRUE")
               for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def _cached(name: str) -> bool:
    """The dataset's files are in the local Hub cache (an offline run can read them)."""
    from huggingface_hub.constants import HF_HUB_CACHE

    cache = Path(os.environ.get("HF_HUB_CACHE") or HF_HUB_CACHE)
    return (cache / f"datasets--{name.replace('/', '--')}" / "snapshots").is_dir()


def check_hub_dataset(spec: str, what: str = "source", timeout: float = HUB_TIMEOUT_S) -> None:
    """``spec``: ``hf:NAME[@REVISION][:rest]``. Raises PreflightError unless the Hub answers for
    the dataset within ``timeout`` (or, offline, it is in the local cache)."""
    from perfalign.perfdata.codecontests import parse_hub_source

    name, revision, _ = parse_hub_source(spec[3:])
    if _offline():
        if _cached(name):
            return
        raise PreflightError(f"{what} {spec!r} needs the Hugging Face Hub, but HF_HUB_OFFLINE is set and "
                             f"{name} is not in the local cache: unset HF_HUB_OFFLINE, or give a local path")
    from huggingface_hub import HfApi
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    api = HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None)  # read now, as offline mode is
    try:
        api.dataset_info(name, revision=revision, timeout=timeout)
    except GatedRepoError:
        raise PreflightError(f"{what} {spec!r}: the dataset is gated; accept its terms on the Hub and set "
                             f"HF_TOKEN") from None
    except RevisionNotFoundError:
        raise PreflightError(f"{what} {spec!r}: revision {revision!r} not found on {api.endpoint}") from None
    except RepositoryNotFoundError:
        raise PreflightError(f"{what} {spec!r}: no dataset {name!r} on {api.endpoint} (or it is private: "
                             f"set HF_TOKEN)") from None
    except OfflineModeIsEnabled:
        raise PreflightError(f"{what} {spec!r} needs the Hugging Face Hub, but offline mode is set") from None
    except HfHubHTTPError as e:
        code = e.response.status_code if e.response is not None else "?"
        raise PreflightError(f"{what} {spec!r}: the Hub at {api.endpoint} answered HTTP {code}") from None
    except (*_http_errors(), OSError) as e:
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise PreflightError(f"{what} {spec!r}: cannot reach the Hugging Face Hub at {api.endpoint} ({reason}); "
                             f"offline? give a local path instead") from None


def _http_errors() -> tuple[type[BaseException], ...]:
    """The transport errors of huggingface_hub's HTTP client (httpx2 in 2.x, httpx before)."""
    out = []
    for mod in ("httpx2", "httpx"):
        try:
            out.append(importlib.import_module(mod).HTTPError)
        except (ImportError, AttributeError):
            pass
    return tuple(out)


def check_sources(sources: Iterable[tuple[str, str | None]]) -> None:
    """(what, spec) pairs: every ``hf:`` spec is checked on the Hub, every path must exist."""
    for what, spec in sources:
        if not spec:
            continue
        if spec.startswith("hf:"):
            check_hub_dataset(spec, what)
        elif not Path(spec).exists():
            raise PreflightError(f"{what} {spec!r} does not exist (expected hf:NAME[:split] or a path)")


def check_gpu(stages: dict[str, Any]) -> None:
    """Stages configured to train on a GPU (``use_cpu`` false) need one."""
    gpu = [name for name, c in stages.items() if c is not None and getattr(c, "use_cpu", True) is False]
    if not gpu:
        return
    import torch

    if not torch.cuda.is_available():
        raise PreflightError(f"stages {', '.join(gpu)} are set to train on a GPU (use_cpu = false), but torch "
                             f"sees no CUDA device: run on a GPU machine, use --profile embedded, or "
                             f"--set {gpu[0]}.use_cpu=true")


def check_judges(required: bool) -> None:
    """The judge environments (scripts/setup.sh): Python 3 contest libraries, the Python 2 root.
    A production build needs them (without them Python submissions run without their libraries
    and Python 2 ones are not run); elsewhere a missing one is a warning."""
    from perfalign.sandbox import environments

    missing = [r for r in (environments.python3_libs().reason, environments.python2().reason) if r]
    if not missing:
        return
    if required:
        raise PreflightError(f"judge environments missing: {missing[0]}")
    for reason in missing:
        log.warning("%s", reason)


def check_pipeline(cfg: Any) -> None:
    """Everything the pipeline needs before its flow starts."""
    check_sources([("--source", cfg.perf.source)])
    check_synth(cfg.synth)
    check_gpu({s: getattr(cfg, s) for s in cfg.align.stages})
    check_judges(required=cfg.profile == "production")


def check_synth(synth: Any) -> None:
    """Hub seeds (``hf:DATASET[:DATA_DIR]``) are checked when an LLM will read them (without a
    key the bundled sample is used and the seeds are not read)."""
    if not (getattr(synth, "seeds", None) or "").startswith("hf:"):
        return
    try:
        from perfalign.perfdata.synth.config import resolve_backend

        uses_llm = resolve_backend(synth)[0].backend != "sample"
    except Exception:  # noqa: BLE001 - the synth stage reports its own configuration errors
        uses_llm = True
    if uses_llm:
        check_sources([("seeds", synth.seeds)])
