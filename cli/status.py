"""What `perfalign status` and the pipeline's closing summary show: per stage its state, how
long it took and its result in one line, per run its profile and when it last changed."""
from __future__ import annotations

import datetime as _dt
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from perfalign.flows.runstate import last_update
from perfalign.flows.summaries import headline

COLOUR = {"completed": "green", "skipped": "cyan", "running": "yellow", "failed": "red", "interrupted": "red"}


def when(t: _dt.datetime | None, now: _dt.datetime | None = None) -> str:
    if t is None:
        return "?"
    now = now or _dt.datetime.now(_dt.timezone.utc)
    ago = (now - t).total_seconds()
    rel = (f"{ago:.0f} s ago" if ago < 120 else f"{ago / 60:.0f} min ago" if ago < 7200
           else f"{ago / 3600:.1f} h ago" if ago < 172800 else f"{ago / 86400:.0f} days ago")
    return f"{t.astimezone(_dt.timezone.utc):%Y-%m-%d %H:%M:%S} UTC ({rel})"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = float(seconds)
    return (f"{seconds:.1f} s" if seconds < 120
            else f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h")


def _state(state: str | None) -> str:
    return f"[{COLOUR.get(state or '', 'white')}]{state}[/]"


def stage_rows(run: dict) -> list[tuple[str, str, str, str]]:
    """(stage, state, time, result) of every stage; a skipped stage shows the time it took when it
    ran; a running one who runs it (``runstate.list_runs`` gives the records as they stand now)."""
    rows = []
    for name, rec in run.get("stages", {}).items():
        if rec.get("state") == "running":
            result = rec.get("runner") or "no process recorded (an older perfalign): if none runs it, rerun to resume"
        elif rec.get("state") in ("failed", "interrupted"):
            result = rec.get("error")
        else:
            result = rec.get("headline") or headline(name, rec.get("summary") or {})
        t = duration(rec.get("seconds"))
        rows.append((name, _state(rec.get("state")), f"{t} (earlier)" if rec.get("state") == "skipped" else t,
                     escape(str(result or ""))))
    return rows


def status_table(runs: list[dict]) -> Table:
    t = Table("run", "stage", "state", "time", "result", title="perfalign runs (newest first)")
    for r in runs:
        rows = stage_rows(r) or [("-", "", "", "")]
        profile = ((r.get("config") or {}).get("_meta") or {}).get("profile") or "?"
        head = (f"[bold]{escape(r.get('run', '?'))}[/bold]\nprofile {escape(profile)}\n"
                f"updated {when(last_update(r))}\n[dim]{escape(r.get('path', ''))}[/dim]")
        for i, row in enumerate(rows):
            t.add_row(head if i == 0 else "", *row, end_section=i == len(rows) - 1)
    return t


def closing_table(result: dict, out: Path) -> Table:
    """The pipeline's closing summary: every stage with its state, time, result and output."""
    t = Table("stage", "state", "time", "result", "output")
    seconds, headlines = result.get("seconds", {}), result.get("headlines", {})
    for name, state in result["states"].items():
        d = duration(seconds.get(name))
        t.add_row(name, _state(state), f"{d} (earlier)" if state == "skipped" else d,
                  escape(headlines.get(name, "")), escape(str(out / name)))
    return t
