"""Stage summaries as people and tools read them: plain JSON values (dataclasses through
``asdict``, never a Python repr), a few readable lines for the logs, a one-line headline for
`perfalign status`, and named Prefect artifacts (a table per stage, the evaluation report as
markdown) that show on the UI's Artifacts page."""
from __future__ import annotations

import base64
import dataclasses
import datetime as _dt
import enum
import logging
import re
import sys
from pathlib import Path
from typing import Any

log = logging.getLogger("perfalign.flows.summaries")
MAX_LINES = 40          # of a summary in the log; the full one is in stages.json and the artifact
MAX_LIST_ITEMS = 5      # list items shown inline


def jsonable(obj: Any) -> Any:
    """``obj`` as plain JSON values: dataclasses field by field, objects with ``to_dict``,
    paths, sets, enums, numpy scalars and arrays, datetimes."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted((jsonable(v) for v in obj), key=str)
    if callable(getattr(obj, "to_dict", None)):
        return jsonable(obj.to_dict())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return jsonable(dataclasses.asdict(obj))
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, enum.Enum):
        return jsonable(obj.value)
    if isinstance(obj, (_dt.datetime, _dt.date)):
        return obj.isoformat()
    if hasattr(obj, "tolist"):  # numpy arrays and scalars
        return jsonable(obj.tolist())
    if hasattr(obj, "item"):
        return jsonable(obj.item())
    raise TypeError(f"{type(obj).__name__} is not JSON-serializable: give it a to_dict() or make it a dataclass")


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, list):
        if v and all(isinstance(x, dict) for x in v):
            return f"{len(v)} rows"
        head = ", ".join(_fmt(x) for x in v[:MAX_LIST_ITEMS])
        more = f" ({len(v)})" if len(v) > MAX_LIST_ITEMS else ""
        return f"[{head}{', ...' if len(v) > MAX_LIST_ITEMS else ''}]" + more
    return str(v)


def flatten(summary: dict, prefix: str = "") -> list[tuple[str, Any]]:
    """(dotted key, value) of every leaf; lists stay whole."""
    out: list[tuple[str, Any]] = []
    for k, v in summary.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and v:
            out += flatten(v, key + ".")
        else:
            out.append((key, v))
    return out


def readable(summary: dict) -> str:
    """``key: value`` lines (nested keys dotted, long lists shortened) for the run and stage logs."""
    rows = flatten(jsonable(summary))
    lines = [f"  {k}: {_fmt(v)}" for k, v in rows[:MAX_LINES]]
    if len(rows) > MAX_LINES:
        lines.append(f"  ... {len(rows) - MAX_LINES} more (stages.json, the Prefect artifact)")
    return "\n".join(lines)


def headline(stage: str, summary: dict) -> str:
    """The stage's result in one line (`perfalign status`, the closing table)."""
    s = jsonable(summary or {})
    try:
        if stage == "codecontests_perf":
            st = s.get("status", {})
            return (f"{st.get('measured', 0)} measured, {st.get('rejected', 0)} rejected, "
                    f"{st.get('unsupported', 0)} unsupported of {s.get('submissions', 0)} submissions "
                    f"({s.get('problems', 0)} problems)")
        if stage == "synthetic":
            return (f"{s.get('total_kept', s.get('kept', 0))} pairs kept, "
                    f"{s.get('total_rejected', s.get('rejected', 0))} rejected")
        if stage == "controlled" and "train_instances" in s:
            return f"{s['train_instances']} training + {s['heldout_instances']} held-out instances measured"
        if stage == "triplets":
            totals = s.get("stats", {}).get("totals", {})
            extra = s.get("stats", {}).get("controlled_task", {}).get("added_rows")
            if isinstance(extra, dict):
                extra = ", ".join(f"{v} {k}" for k, v in extra.items())
            return (f"{totals.get('triplets', '?')} triplets, {totals.get('sft_prompts', '?')} SFT prompts"
                    + (f" (controlled task: +{extra})" if extra else ""))
        if stage == "align":
            parts = []
            for name, r in s.items():
                m = {k: v for k, v in (r.get("metrics") or {}).items()
                     if k.startswith("eval_") and isinstance(v, float)}
                key = next(iter(sorted(m)), None)
                parts.append(f"{name} {key[5:]}={m[key]:.3g}" if key else name)
            return ", ".join(parts)
        if stage == "evaluate":
            best = []
            for sc in s.get("scores", []):
                p1, s1 = sc.get("pass_at", {}).get("1"), sc.get("speedup_at", {}).get("1")
                if p1 is not None:
                    best.append((p1, s1 or 0.0, f"{sc.get('model')}/{sc.get('task')}"))
            if not best:
                return "no scores"
            p1, s1, who = max(best)
            return f"{len(best)} model x task scores; best pass@1 {p1:.3f} ({who}, speedup_n@1 {s1:.3f})"
        if stage == "publish":
            return str(s.get("url") or s.get("skipped") or "")
    except (AttributeError, TypeError, ValueError):
        pass
    return ", ".join(f"{k}={_fmt(v)}" for k, v in flatten(s)[:4])


def artifact_key(*parts: str) -> str:
    """Prefect artifact keys: lowercase letters, digits and dashes."""
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "-", "-".join(parts).lower())).strip("-")


def _in_run() -> bool:
    if "prefect" not in sys.modules:  # no Prefect, no run (a no-op answered from the run state)
        return False
    from prefect.context import FlowRunContext, TaskRunContext

    return bool(FlowRunContext.get() or TaskRunContext.get())


def publish_stage(run: str, stage: str, summary: dict, seconds: float | None, line: str | None = None) -> None:
    """A table artifact of the stage's summary (key ``<run>-<stage>``), plus one per list of
    rows in it (e.g. the evaluation's scores); inside a Prefect run only. ``line``: the result
    in one line when the summary shown is not the one ``headline`` reads. Never fails the stage."""
    if not _in_run():
        return
    try:
        from prefect.artifacts import create_table_artifact

        s = jsonable(summary)
        line = line or headline(stage, s)
        log.info("%s / %s: %s\n%s", run, stage, line, readable(s))  # the run's log in the UI
        rows = [{"setting": "seconds", "value": "" if seconds is None else f"{seconds:.1f}"},
                {"setting": "result", "value": line}]
        tables = {}
        for k, v in flatten(s):
            if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
                tables[k] = v
            else:
                rows.append({"setting": k, "value": _fmt(v)})
        create_table_artifact(table=rows, key=artifact_key(run, stage), description=f"**{run} / {stage}**: {line}")
        for k, table in tables.items():
            flat = [{c: _fmt(x) for c, x in flatten(r) if not isinstance(x, list) or len(str(x)) < 200}
                    for r in table]
            create_table_artifact(table=flat, key=artifact_key(run, stage, k), description=f"{run} / {stage}: {k}")
    except Exception as e:  # noqa: BLE001 - the UI is a view; the stage's result stands
        log.warning("could not publish the %s summary as a Prefect artifact: %s", stage, e)


_IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+\.png)\)")


def embed_images(markdown: str, folder: Path) -> str:
    """``![title](fig.png)`` links relative to ``folder`` as data URIs: the Prefect UI shows an
    artifact's markdown without the files beside it, so relative images render broken."""
    def inline(m: re.Match) -> str:
        f = folder / m.group(2)
        if "://" in m.group(2) or not f.is_file():
            return m.group(0)
        return f"![{m.group(1)}](data:image/png;base64,{base64.b64encode(f.read_bytes()).decode()})"

    return _IMAGE.sub(inline, markdown)


def publish_markdown(run: str, name: str, path: str | Path) -> None:
    """A markdown artifact (key ``<run>-<name>``) of a report file, its figures embedded. Never
    fails the caller."""
    if not _in_run():
        return
    try:
        from prefect.artifacts import create_markdown_artifact

        path = Path(path)
        create_markdown_artifact(markdown=embed_images(path.read_text(), path.parent), key=artifact_key(run, name),
                                 description=f"{run}: {name} ({path})")
    except Exception as e:  # noqa: BLE001
        log.warning("could not publish %s as a Prefect artifact: %s", path, e)


STAGE_DIRS = ("codecontests_perf", "synthetic", "controlled", "triplets", "align", "evaluate")


def run_label(out: str | Path) -> str:
    """The run a stage's output folder belongs to: the run directory's name for a pipeline
    stage (``runs/embedded/evaluate`` -> ``embedded``), else the folder's own name."""
    p = Path(out).resolve()
    return p.parent.name if p.name in STAGE_DIRS and p.parent.name else p.name


def flow_run_name(stage: str, param: str = "out"):
    """A ``flow_run_name`` callable: ``<run>/<stage>`` from the flow's ``param`` (a folder)."""
    def name() -> str:
        from prefect.runtime import flow_run

        value = (flow_run.parameters or {}).get(param)
        return f"{run_label(value)}/{stage}" if value else stage

    return name
