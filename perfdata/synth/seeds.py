"""Seed snippets: 1-15 line random substrings of random source files (paper §IV-B, after
OSS-Instruct), from The Stack via `datasets`, a local directory, or the bundled corpus.

Seed i depends only on (seed, i) and the file pool, so a rerun with a larger n reuses the
first seeds unchanged.
"""
from __future__ import annotations

import logging
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from perfalign.common.paths import BUNDLED_DATA, bundled

log = logging.getLogger("perfalign.perfdata.synth.seeds")

BUNDLED_SEEDS = BUNDLED_DATA / "stack_seeds"
SOURCE_SUFFIXES = {
    ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".py", ".java", ".rs", ".go", ".js",
    ".ts", ".rb", ".f90", ".f", ".jl", ".cs", ".kt", ".scala", ".sh", ".m", ".r", ".lua",
}
MAX_FILE_BYTES = 1_000_000
MAX_SEED_LINES = 15


@dataclass(frozen=True)
class SourceFile:
    source: str   # "bundled", "dir:<root>" or "hf:<dataset>"
    path: str     # path within the source
    text: str


@dataclass(frozen=True)
class Seed:
    source: str
    path: str
    start_line: int  # 1-based, inclusive
    end_line: int    # inclusive
    text: str


def load_seed_files(spec: str | None, *, seed: int = 0, pool_size: int = 2000) -> list[SourceFile]:
    """The file pool for ``spec`` (None: bundled; "hf:NAME[:DATA_DIR]"; or a directory)."""
    if spec is None:
        files = _read_directory(bundled(BUNDLED_SEEDS.name, "seeds (a directory or hf:DATASET)"), "bundled")
    elif spec.startswith("hf:"):
        files = _read_hf(spec, seed=seed, pool_size=pool_size)
    else:
        root = Path(spec)
        files = _read_directory(root, f"dir:{root}")
    if not files:
        raise ValueError(f"seeds {spec or BUNDLED_SEEDS}: no non-empty source files found")
    return files


def _read_directory(root: Path, source: str) -> list[SourceFile]:
    if not root.is_dir():
        raise ValueError(f"seed directory {root} does not exist")
    out = []
    unused: Counter = Counter()  # source files left out of the pool, by why: said, not silent
    for p in sorted(root.rglob("*")):  # sorted: the pool order is part of determinism
        if not p.is_file() or p.suffix.lower() not in SOURCE_SUFFIXES:
            continue
        if p.stat().st_size > MAX_FILE_BYTES:
            unused[f"larger than {MAX_FILE_BYTES} bytes"] += 1
            continue
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            unused["not UTF-8 text"] += 1
            continue
        except OSError as e:
            unused[f"unreadable ({type(e).__name__})"] += 1
            continue
        if text.strip():
            out.append(SourceFile(source, p.relative_to(root).as_posix(), text))
    if unused:
        log.warning("seed directory %s: %d source files not used: %s", root, sum(unused.values()),
                    ", ".join(f"{n} {why}" for why, n in unused.most_common()))
    return out


def _read_hf(spec: str, *, seed: int, pool_size: int) -> list[SourceFile]:
    """Streams the first ``pool_size`` files of a shuffled HF code dataset (The Stack layout:
    a ``content`` column). The full Stack is gated: set HF_TOKEN after accepting its terms."""
    name, _, data_dir = spec[3:].partition(":")
    from datasets import load_dataset

    ds = load_dataset(name, data_dir=data_dir or None, split="train", streaming=True)
    # Streaming shuffle is a seeded buffer shuffle: deterministic for a given seed.
    ds = ds.shuffle(seed=seed, buffer_size=10_000)
    out = []
    for i, row in enumerate(ds):
        if len(out) >= pool_size:
            break
        text = row.get("content") or row.get("text") or ""
        if not text.strip() or len(text) > MAX_FILE_BYTES:
            continue
        path = row.get("path") or row.get("max_stars_repo_path") or row.get("repo_path") or f"row-{i}"
        out.append(SourceFile(f"hf:{name}", str(path), text))
    return out


def pick_seed(files: list[SourceFile], seed: int, index: int) -> Seed:
    """Seed snippet ``index``: a random 1-15 line window of a random file."""
    rng = random.Random(f"perfalign-synth-seed:{seed}:{index}")
    for _ in range(50):  # a few retries so a whitespace-only window is not chosen
        f = files[rng.randrange(len(files))]
        lines = f.text.splitlines()
        length = min(rng.randint(1, MAX_SEED_LINES), len(lines))
        start = rng.randrange(len(lines) - length + 1)
        text = "\n".join(lines[start:start + length])
        if text.strip():
            return Seed(f.source, f.path, start + 1, start + length, text)
    # Every file is non-empty, so this is reached only by bad luck; take the file's head.
    f = files[0]
    lines = f.text.splitlines()[:MAX_SEED_LINES]
    return Seed(f.source, f.path, 1, len(lines), "\n".join(lines))
