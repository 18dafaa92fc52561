"""A seed's records, kept where a machine's disk may not outlive the session (docs/alignment.md, "The
confirmatory seeds restart on records kept in the repository"): what a new machine needs to resume a
seed of ``experiments/alignment_proof.py`` at its last finished unit, and the bookkeeping two processes
on one seed share.

- ``record_files`` / ``save_records`` / ``restore_records``: the finished units' records (metrics, stage
  configs, the weights' digests, every evaluation's samples; no weights), copied out and back;
- ``weights_digest`` (``WEIGHTS_DIGEST_FILE``): a trained model's weights' SHA-256, compared when a stage is
  trained again; ``bind_samples`` (``SAMPLES_DIGEST_FILE``): a sample file is continued only by the
  weights that began it;
- ``machine_lock``: a lock per stage or per model's evaluation between the processes of one machine;
  ``record_timings``: the seed's timings file, merged by whichever process writes.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import shutil
from pathlib import Path

from perfalign.common.fileio import atomic_write, atomic_write_json


@contextlib.contextmanager
def machine_lock(path: Path, wait: bool = False):
    """True while this process holds the lock file ``path`` (``flock``; released with the process,
    however it ends); unless ``wait``, False at once when another process holds it."""
    import fcntl

    with open(path, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def record_timings(path: Path, **new: float) -> dict:
    """The seed's timings file with ``new`` merged in, read just before it is replaced (atomically), so
    that two processes on one seed (e.g. ``--arms rlpf`` beside ``--arms dpa``) keep each other's."""
    timings = json.loads(path.read_text()) if path.exists() else {}
    if new:
        timings.update(new)
        atomic_write_json(path, timings)
    return timings


WEIGHTS_DIGEST_FILE = "weights.sha256"  # a trained model's weights' SHA-256 (and, trained again, whether equal)
SAMPLES_DIGEST_FILE = "model.sha256"  # a samples folder's: the digest of the weights that drew its samples


def weight_files(run_dir: Path) -> list[Path]:
    """A run directory's weight files (``save_pretrained``'s safetensors or pytorch_model bins; not
    training_args.bin, which holds the run's paths)."""
    return sorted(f for pattern in ("*.safetensors", "pytorch_model*.bin") for f in run_dir.glob(pattern))


def weights_digest(run_dir: Path) -> str:
    """SHA-256 over the run directory's weight files, names and bytes in order."""
    h = hashlib.sha256()
    for f in weight_files(run_dir):
        h.update(f.name.encode() + b"\0")
        with f.open("rb") as fh:
            while chunk := fh.read(1 << 24):
                h.update(chunk)
    return h.hexdigest()


def read_json(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


def record_files(w: Path, humaneval_problems: int) -> list[Path]:
    """The records of the seed dir ``w`` that a new machine needs to resume, relative to ``w``: the
    seed's timings, reports and result; each trained model's metrics, stage config and weights'
    digest (not its weights, tokenizer or checkpoints); each model's evaluation samples and RFT's
    once finished (its report, its chosen rows written), and a sample file cut short only with the
    digest of the weights that drew it (``bind_samples``): a new machine continues it only with the
    same weights, and draws it again otherwise."""
    from perfalign.alignment.stage_config import METRICS_FILE

    out = [Path(n) for n in ("result.json", "timings.json") if (w / n).is_file()]
    out += [p.relative_to(w) for p in sorted(w.glob("samples_*.json"))]
    for run in sorted(p for p in w.iterdir() if (p / METRICS_FILE).is_file()):
        out += [p.relative_to(w) for n in (METRICS_FILE, "stage_config.json", WEIGHTS_DIGEST_FILE)
                if (p := run / n).is_file()]
    for d in sorted([*w.glob("eval_*_*"), w / "rft_samples"]):
        if not (d / "samples.jsonl").is_file():
            continue
        if d.name == "rft_samples":
            done = (d / "chosen.json").is_file()
        else:
            name, split = d.name.removeprefix("eval_").rsplit("_", 1)
            report = read_json(w / f"samples_{name}.json")
            done = split in report and (split != "humaneval" or report[split].get("problems") == humaneval_problems)
        if done or (d / SAMPLES_DIGEST_FILE).is_file():
            out += [p.relative_to(w) for n in ("samples.jsonl", "chosen.json", SAMPLES_DIGEST_FILE)
                    if (p := d / n).is_file()]
    return out


def bind_samples(out: Path, model_dir: Path) -> None:
    """Before sampling into ``out``: tie it to the weights of ``model_dir`` (their digest, when
    known). Samples drawn by other weights (a model trained again on a new machine that did not come
    out identical) are deleted, to be drawn again: a unit is never continued by other weights."""
    digest = read_json(model_dir / WEIGHTS_DIGEST_FILE).get("sha256")
    if digest is None:  # weights of unknown digest: only this machine's own resume
        return
    mine, samples = out / SAMPLES_DIGEST_FILE, out / "samples.jsonl"
    if mine.is_file() and mine.read_text().strip() != digest and samples.is_file():
        print(f"{out}: its samples were drawn by other weights than {model_dir}'s: drawn again", flush=True)
        samples.unlink()
    out.mkdir(parents=True, exist_ok=True)
    mine.write_text(digest)


def save_records(w: Path, dest: Path, humaneval_problems: int) -> list[Path]:
    """Copy the seed dir's records (``record_files``) to ``dest`` (e.g. a folder of the repository:
    a machine's disk may not outlive its session), each file replaced atomically. The files copied."""
    files = record_files(w, humaneval_problems)
    for rel in files:
        atomic_write(dest / rel, functools.partial(shutil.copyfile, w / rel))
    return files


def restore_records(src: Path, w: Path) -> list[Path]:
    """Copy the records saved in ``src`` into the seed dir ``w`` where it lacks them (what this
    machine has is never replaced). The files copied."""
    if not src.is_dir():
        return []
    copied = []
    for f in sorted(p for p in src.rglob("*") if p.is_file() and not p.name.startswith(".")):
        target = w / f.relative_to(src)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, target)
            copied.append(f.relative_to(src))
    return copied
