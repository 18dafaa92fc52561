"""Run directories: each pipeline run keeps its stages' outputs, logs and states together.

    <run>/stages.json        stage -> state, input hash, times, summary, error, log path
    <run>/logs/<stage>.log   the stage's log (library loggers at INFO, tracebacks)
    <run>/<stage>/           the stage's output

A stage whose input hash (settings + the content of its inputs) matches a completed record is
skipped, so a rerun is incremental and a crashed run resumes at the stage that did not finish.

A running stage records who runs it (``owner``: host, boot, PID and the process's start time,
so a reused PID is not mistaken for it): a record whose process is gone (kill -9, out of memory,
a reboot) reads as interrupted (``view``), and the next run of the directory stores it so.
A run directory belongs to the profile that made it: another profile's run is refused there
unless asked for (``check_run_dir``).

Why not Prefect's task caching (``cache_key_fn`` + persisted results): a stage's result is a
folder of Parquet shards and model weights in the run directory, not a picklable return value,
and the skip must survive deleting Prefect's database and be visible to `perfalign status`
without a server; the key is the same idea (settings + content hashes of the inputs).
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import logging
import os
import socket
import time
from pathlib import Path
from typing import Any, Callable

from perfalign.common.fileio import atomic_write_json, hash_files
from perfalign.config.defaults import RUNS_ROOT
from perfalign.sandbox.calibration import boot_id

from .env import LIBRARY_LOGGERS, route_library_logs
from .summaries import headline, jsonable, publish_stage, readable

_log = logging.getLogger("perfalign.flows.pipeline")


class StageFailed(RuntimeError):
    """A stage failed: names the stage, its input and its log."""

    def __init__(self, stage: str, input_desc: str, log: Path, cause: BaseException) -> None:
        super().__init__(f"stage {stage!r} failed on input {input_desc}: {type(cause).__name__}: {cause} (log: {log})")
        self.stage, self.input_desc, self.log = stage, input_desc, log


class RunDirConflict(RuntimeError):
    """The run directory holds another profile's run, or a live process runs a stage in it."""


RESUME_HINT = "rerun the same command to resume"


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def fingerprint(*paths: str | Path, extra: Any = None) -> str:
    """Content hash of files/directories (``hash_files``: hidden ones left out) plus ``extra``."""
    h = hashlib.sha256(json.dumps(extra, sort_keys=True, default=str).encode())
    for p in map(Path, paths):
        if p.exists():
            hash_files(h, p)
        else:
            h.update(f"missing:{p}".encode())
    return h.hexdigest()[:20]


def _start_ticks(pid: int) -> int | None:
    """The process's start time (clock ticks after boot, /proc/PID/stat field 22); None if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return int(stat.rsplit(b")", 1)[1].split()[19])


def process_owner(pid: int | None = None) -> dict:
    """Who runs something: host, boot, PID and the process's start time."""
    pid = pid or os.getpid()
    return {"host": socket.gethostname(), "boot": boot_id(), "pid": pid, "start": _start_ticks(pid)}


def owner_alive(owner: dict | None) -> bool | None:
    """Whether the process ``owner`` names still runs; None when this host cannot tell (another
    host, or no owner recorded)."""
    if not owner or owner.get("host") != socket.gethostname():
        return None
    if not owner.get("boot") or not boot_id().startswith(owner["boot"]):  # a tag holds its first characters
        return False
    start = _start_ticks(int(owner["pid"]))
    return start is not None and start == owner.get("start")


def describe_owner(owner: dict) -> str:
    return f"process {owner.get('pid')} on {owner.get('host')}"


OWNER_TAG = "owner:"


def owner_tag(owner: dict | None = None) -> str:
    """The owner as a Prefect tag on the command's flow runs (cli.session)."""
    o = owner or process_owner()
    return f"{OWNER_TAG}{o['host']}:{o['boot'][:8]}:{o['pid']}:{o['start']}"


def tag_owner(tags: list[str]) -> dict | None:
    """The owner an owner tag names (the boot id's first characters), else None."""
    for t in tags:
        if t.startswith(OWNER_TAG):
            try:
                host, boot, pid, start = t[len(OWNER_TAG):].rsplit(":", 3)
                return {"host": host, "boot": boot, "pid": int(pid), "start": int(start)}
            except ValueError:
                return None
    return None


def orphans_in_local_db(db: Path) -> int:
    """How many unfinished flow runs of the local Prefect database (read directly: no server, no
    Prefect import) belong to a process that is gone."""
    if not db.is_file():
        return 0
    import sqlite3

    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)) as c:
            rows = c.execute("select tags from flow_run where state_type in "
                             "('RUNNING', 'PENDING', 'SCHEDULED', 'PAUSED')").fetchall()
    except sqlite3.Error:
        return 0
    return sum(owner_alive(tag_owner(json.loads(t or "[]"))) is False for (t,) in rows)


def view(rec: dict) -> dict:
    """A stage record as it stands now: a running record whose process is gone reads interrupted,
    with how to resume (and no result: it has none); one that runs says who runs it (``runner``)."""
    if rec.get("state") != "running" or not rec.get("owner"):
        return rec
    alive = owner_alive(rec["owner"])
    if alive is None:
        return {**rec, "runner": f"{describe_owner(rec['owner'])} (another host: cannot tell whether it runs)"}
    if alive:
        return {**rec, "runner": describe_owner(rec["owner"])}
    return {**rec, "state": "interrupted", "summary": None, "headline": None,
            "error": f"{describe_owner(rec['owner'])} is gone; {RESUME_HINT}"}


def run_profile(data: dict) -> str | None:
    return ((data.get("config") or {}).get("_meta") or {}).get("profile")


def default_run_dir(profile: str) -> Path:
    """A run directory per profile: runs of two profiles never mix."""
    return RUNS_ROOT / profile


def check_run_dir(run_dir: str | Path, profile: str, reuse: bool = False) -> None:
    """Refuse a run directory made by another profile (unless ``reuse``) or in use by a live process."""
    try:
        data = json.loads((Path(run_dir) / "stages.json").read_text())
    except (OSError, ValueError):
        return
    made_by = run_profile(data)
    if made_by and made_by != profile and not reuse:
        raise RunDirConflict(f"{run_dir} holds a run of profile {made_by!r}, not {profile!r}: leave out --out "
                             f"(runs/<profile> is the default) or pass --reuse-run-dir to run {profile!r} there")
    me = process_owner()
    for stage, rec in data.get("stages", {}).items():
        owner = rec.get("owner")
        if rec.get("state") == "running" and owner_alive(owner) and owner.get("pid") != me["pid"]:
            raise RunDirConflict(f"{run_dir}: stage {stage} is running there ({describe_owner(owner)})")


class RunState:
    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / "stages.json"
        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / "logs").mkdir(exist_ok=True)
        try:
            self.data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self.data = {"run": self.run_dir.name, "created": _now(), "stages": {}}
        stages = self.data["stages"]
        for name, rec in stages.items():  # a stage whose process died: interrupted, for good
            if rec.get("state") == "running" and owner_alive(rec.get("owner")) is False:
                stages[name] = view(rec)

    def save(self) -> None:
        self.data["updated"] = _now()
        atomic_write_json(self.path, self.data, indent=1)

    def unchanged(self, stage: str, input_hash: str) -> dict | None:
        """The stage's record when it completed with this input hash (nothing to redo), else None."""
        rec = self.data["stages"].get(stage)
        if rec and rec.get("state") in ("completed", "skipped") and rec.get("input_hash") == input_hash:
            return rec
        return None

    def skip(self, stage: str) -> dict:
        """Record an unchanged stage as skipped; returns its summary."""
        rec = self.data["stages"][stage]
        rec.update(state="skipped", skipped_at=_now())
        rec.setdefault("headline", headline(stage, rec.get("summary") or {}))
        self.save()
        _log.info("stage %s skipped: inputs and settings unchanged since %s (%s)", stage, rec.get("finished"),
                  rec["headline"])
        publish_stage(self.run_dir.name, stage, rec.get("summary") or {}, rec.get("seconds"))  # inside a flow only
        return rec.get("summary") or {}

    def run_stage(self, stage: str, input_hash: str, input_desc: str, fn: Callable[[], dict]) -> dict:
        """Run ``fn`` unless a completed record has the same input hash; returns its summary."""
        if self.unchanged(stage, input_hash):
            return self.skip(stage)
        log = self.run_dir / "logs" / f"{stage}.log"
        rec = {"state": "running", "input_hash": input_hash, "input": input_desc, "started": _now(),
               "log": str(log), "owner": process_owner()}
        self.data["stages"][stage] = rec
        self.save()
        t0 = time.monotonic()
        with _stage_log(log):
            _log.info("stage %s started on %s (log: %s)", stage, input_desc, log)
            try:
                summary = fn()
            except Exception as e:
                # one line for the terminal; the traceback for the stage log and the UI's run log
                _log.error("stage %s failed: %s: %s (log: %s)", stage, type(e).__name__, e, log, exc_info=True)
                rec.update(state="failed", finished=_now(), seconds=round(time.monotonic() - t0, 1),
                           error=f"{type(e).__name__}: {e}")
                self.save()
                raise StageFailed(stage, input_desc, log, e) from e
            except BaseException as e:  # Ctrl-C, SIGTERM: recorded, and passed on as it is (the run crashes)
                rec.update(state="interrupted", finished=_now(), seconds=round(time.monotonic() - t0, 1),
                           error=f"{type(e).__name__}; {RESUME_HINT}")
                self.save()
                raise
            summary = _plain_summary(stage, summary)
            rec.update(state="completed", finished=_now(), seconds=round(time.monotonic() - t0, 1), summary=summary,
                       headline=headline(stage, summary))
            _log.info("stage %s completed in %.1f s: %s\n%s", stage, rec["seconds"], rec["headline"], readable(summary))
        self.save()  # the stage's flow published its artifact
        return summary


def _plain_summary(stage: str, summary: dict) -> dict:
    """The summary as plain JSON values (what stages.json, the log and the artifact hold)."""
    try:
        return jsonable(summary or {})
    except TypeError as e:
        _log.warning("stage %s: %s; stored as text", stage, e)
        return json.loads(json.dumps(summary, default=str))


@contextlib.contextmanager
def _stage_log(path: Path):
    """Library loggers at INFO into the stage's log file (they also reach the Prefect run's logs,
    and warnings the console: flows.env routes them once per process)."""
    route_library_logs()
    to_file = logging.FileHandler(path, mode="a")
    to_file.setLevel(logging.INFO)
    to_file.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    loggers = [logging.getLogger(n) for n in LIBRARY_LOGGERS]
    for lg in loggers:
        lg.addHandler(to_file)
    try:
        yield
    finally:
        for lg in loggers:
            lg.removeHandler(to_file)
        to_file.close()


def _parse(ts: str | None) -> _dt.datetime | None:
    try:
        t = _dt.datetime.fromisoformat(ts) if ts else None
    except ValueError:
        return None
    return t if t is None or t.tzinfo else t.replace(tzinfo=_dt.timezone.utc)


def last_update(run: dict) -> _dt.datetime | None:
    """The latest moment the run's record changed (a stage started, finished or was skipped)."""
    times = [run.get("updated"), run.get("created")]
    for rec in run.get("stages", {}).values():
        times += [rec.get("started"), rec.get("finished"), rec.get("skipped_at")]
    parsed = [t for t in map(_parse, times) if t]
    return max(parsed) if parsed else None


def list_runs(root: str | Path) -> list[dict]:
    """Recent runs under ``root`` (newest first) with their stage states."""
    out = []
    for f in Path(root).glob("*/stages.json"):
        try:
            d = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        d["path"] = str(f.parent)
        d["stages"] = {k: view(v) for k, v in d.get("stages", {}).items()}
        out.append(d)
    return sorted(out, key=lambda d: last_update(d) or _dt.datetime.min.replace(tzinfo=_dt.timezone.utc), reverse=True)
