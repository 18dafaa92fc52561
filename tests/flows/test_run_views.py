"""What the UI and the terminal show of a run: summaries as readable text and plain
JSON (no Python reprs), named flow runs and tasks, named artifacts, `perfalign status` with
profile, durations and results, each library warning printed once through the bars' console."""
import asyncio
import base64
import json
import os
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from perfalign.cli.status import status_table
from perfalign.flows.runstate import RunState
from perfalign.flows.summaries import artifact_key, jsonable, readable, run_label

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class _Prompt:
    prompt_id: str
    speedup: float


@dataclass
class _Score:
    model: str
    task: str
    pass_at: dict
    speedup_at: dict
    per_prompt: list = field(default_factory=list)


def test_stage_summary_is_plain_json_and_readable_text(tmp_path):
    run = RunState(tmp_path / "myrun")
    scores = [_Score("base", "pareval", {"1": 0.25}, {"1": 1.5}, [_Prompt("p1", 1.5), _Prompt("p2", 0.0)])]
    summary = run.run_stage("evaluate", "h1", "input", lambda: {"report": tmp_path / "report.md", "scores": scores,
                                                                "tasks": ("pareval",)})
    text = (tmp_path / "myrun" / "stages.json").read_text()
    assert "_Prompt(" not in text and "_Score(" not in text  # before: json.dumps(default=str) stored reprs
    rec = json.loads(text)["stages"]["evaluate"]
    assert rec["summary"]["scores"][0]["per_prompt"][1] == {"prompt_id": "p2", "speedup": 0.0}
    assert summary == rec["summary"]
    assert rec["headline"].startswith("1 model x task scores; best pass@1 0.250 (base/pareval")
    assert json.loads(text)["updated"] >= rec["finished"]  # 'updated' moves with every change
    log = (tmp_path / "myrun" / "logs" / "evaluate.log").read_text()
    assert "stage evaluate completed" in log and "  scores: 1 rows" in log and "  tasks: [pareval]" in log
    assert "{" not in log.split("completed", 1)[1]  # readable lines, not a JSON dump


def test_jsonable_and_labels():
    assert jsonable({"p": Path("/a"), "s": {2, 1}, "t": (1, 2)}) == {"p": "/a", "s": [1, 2], "t": [1, 2]}
    assert "more" in readable({f"k{i}": i for i in range(60)})
    assert run_label("runs/embedded/evaluate") == "embedded" and run_label("/tmp/report") == "report"
    assert artifact_key("Embedded", "codecontests_perf") == "embedded-codecontests-perf"


def test_evaluation_task_is_named_readably():
    from types import SimpleNamespace

    from perfalign.flows.evaluate import _evaluation_name

    cfg = SimpleNamespace(tasks=("codecontests", "pareval"), models=["a", "b"])
    assert _evaluation_name({"config": cfg}) == "evaluate codecontests, pareval (2 models)"  # not a tuple repr


def test_status_shows_profile_durations_results_and_latest_update(tmp_path):
    from perfalign.flows.runstate import list_runs

    d = tmp_path / "runs" / "embedded"
    d.mkdir(parents=True)
    (d / "stages.json").write_text(json.dumps({
        "run": "embedded", "created": "2026-01-01T00:00:00+00:00", "updated": "2026-01-01T00:00:01+00:00",
        "config": {"_meta": {"profile": "embedded"}},
        "stages": {"codecontests_perf": {"state": "completed", "started": "2026-01-01T00:00:01+00:00",
                                         "finished": "2026-01-01T00:10:00+00:00", "seconds": 599.0,
                                         "summary": {"status": {"measured": 40, "rejected": 2}, "submissions": 50,
                                                     "problems": 5}},
                   "synthetic": {"state": "skipped", "seconds": 12.34, "skipped_at": "2026-01-02T00:00:00+00:00",
                                 "headline": "32 pairs kept, 0 rejected"}}}))
    console = Console(record=True, width=250)
    console.print(status_table(list_runs(tmp_path / "runs")))
    out = console.export_text()
    assert "profile embedded" in out
    assert "updated 2026-01-02 00:00:00 UTC" in out  # the latest change, not the stale 'updated'
    assert "10.0 min" in out and "12.3 s (earlier)" in out
    assert "40 measured, 2 rejected, 0 unsupported of 50 submissions (5 problems)" in out
    assert "32 pairs kept" in out


_PRINT_ONCE = r"""
import logging, sys
from perfalign.flows.env import route_library_logs
route_library_logs()
import huggingface_hub.utils.logging, datasets.utils.logging  # they add their own stderr handlers
from perfalign.common.progress import report
from perfalign.cli.progress import progress_bars
from perfalign.common.terminal import CONSOLE, ConsoleLogHandler
with progress_bars():
    report("work", 1, 4)
    huggingface_hub.utils.logging.get_logger("huggingface_hub.utils._http").warning("HUB-RETRY-MARK")
    logging.getLogger("datasets.load").warning("DATASETS-MARK")
    logging.getLogger("perfalign.perfdata").warning("PERFALIGN-MARK")
    try:
        raise ValueError("boom")
    except ValueError:
        logging.getLogger("prefect.flow_runs").error("CRASH-MARK", exc_info=True)
    report("work", 4, 4)
handlers = [h for h in logging.getLogger().handlers if isinstance(h, ConsoleLogHandler)]
assert len(handlers) == 1 and handlers[0].console is CONSOLE, logging.getLogger().handlers
"""


def test_each_warning_printed_once_through_the_bars_console(tmp_path):
    env = dict(os.environ, PERFALIGN_HOME=str(tmp_path), COLUMNS="200")
    p = subprocess.run([sys.executable, "-c", _PRINT_ONCE], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    err = p.stderr
    for mark in ("HUB-RETRY-MARK", "DATASETS-MARK", "PERFALIGN-MARK", "CRASH-MARK"):
        assert err.count(mark) == 1, (mark, err)  # before: hub and datasets lines came twice
    assert "Traceback" not in err and "ValueError: boom" in err  # one line, the cause kept
    assert "work" in err and "HUB-RETRY-MARK" not in p.stdout  # bars and logs share stderr


async def _flow_run(run_id):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    async with get_client() as client:
        fr = await client.read_flow_run(run_id)
        run_filter = ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[run_id]))
        arts = await client.read_artifacts(artifact_filter=run_filter)
        return fr, arts


def test_flow_runs_named_after_the_run_and_stage_with_artifacts(prefect_server, tmp_path, monkeypatch):
    monkeypatch.setenv("PREFECT_API_URL", prefect_server)
    from prefect import flow
    from prefect.context import get_run_context

    from perfalign.flows.summaries import flow_run_name, publish_markdown, publish_stage

    run = f"run{uuid.uuid4().hex[:6]}"
    (tmp_path / run / "evaluate").mkdir(parents=True)
    report = tmp_path / run / "evaluate" / "report.md"
    report.write_text("# Evaluation report\n\n| model | pass@1 |\n|---|---|\n| base | 0.25 |\n\n"
                      "![pass@1 (cf. Fig. 5)](fig_pass_at_1.png)\n")
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 32  # the UI gets the file's bytes, whatever they are
    (report.parent / "fig_pass_at_1.png").write_bytes(png)

    @flow(name="evaluate-probe", flow_run_name=flow_run_name("evaluate"))
    def probe(out: str):
        publish_stage(run_label(out), "evaluate", {"scores": [{"model": "base", "pass@1": 0.25}], "n": 3}, 1.5)
        publish_markdown(run_label(out), "evaluation-report", report)
        return get_run_context().flow_run.id

    run_id = probe(str(tmp_path / run / "evaluate"))
    fr, arts = asyncio.run(_flow_run(run_id))
    assert fr.name == f"{run}/evaluate"
    by_key = {a.key: a for a in arts}
    assert {f"{run}-evaluate", f"{run}-evaluate-scores", f"{run}-evaluation-report"} <= set(by_key), by_key
    assert by_key[f"{run}-evaluate"].type == "table" and by_key[f"{run}-evaluation-report"].type == "markdown"
    assert "| base | 0.25 |" in by_key[f"{run}-evaluation-report"].data
    # the figure travels inside the artifact: the UI has no file beside it to resolve a relative link
    embedded = f"![pass@1 (cf. Fig. 5)](data:image/png;base64,{base64.b64encode(png).decode()})"
    assert embedded in by_key[f"{run}-evaluation-report"].data
    rows = by_key[f"{run}-evaluate"].data
    rows = json.loads(rows) if isinstance(rows, str) else rows
    assert {"setting": "n", "value": "3"} in rows and {"setting": "seconds", "value": "1.5"} in rows


def test_closing_summary_has_stage_durations_and_results(tmp_path):
    from perfalign.cli.status import closing_table

    result = {"states": {"codecontests_perf": "skipped", "evaluate": "completed"},
              "seconds": {"codecontests_perf": 61.0, "evaluate": 4000.0},
              "headlines": {"evaluate": "1 model x task scores; best pass@1 0.250"}}
    console = Console(record=True, width=250)
    console.print(closing_table(result, tmp_path))
    out = console.export_text()
    assert "61.0 s (earlier)" in out and "66.7 min" in out and "best pass@1 0.250" in out


def test_evaluation_execution_reports_a_bar(tmp_path):
    """Issue 24: no bar while `evaluate` executed its programs (44 s of silence). The execution
    reports every finished program (the bar `evaluate: programs run`), serial and threaded ones
    alike, with its total from the start."""
    from perfalign.common.progress import listening
    from perfalign.evaluation.sandbox_jobs import run_jobs
    from perfalign.sandbox import Job, Sandbox, TestCase, Verdict

    add = "a, b = map(int, input().split())\nprint(a + b)\n"
    jobs = [Job(add, "python3", [TestCase(f"{i} 1", str(i + 1))]) for i in range(3)]
    seen: list[tuple[str, int, int]] = []
    with Sandbox(workers=2, calibrate=False, cache_dir=tmp_path / "cache") as sb, \
            listening(lambda what, done, total: seen.append((what, done, total))):
        results = run_jobs(sb, jobs, [False, True, False], workers=2)
    assert [r.verdict for r in results] == [Verdict.OK] * 3
    bar = [(d, t) for w, d, t in seen if w == "evaluate: programs run"]
    assert bar[0] == (0, 3) and bar[-1] == (3, 3) and [d for d, _ in bar] == sorted(d for d, _ in bar), bar


def test_every_stage_flow_is_named_after_its_run_and_stage(monkeypatch, tmp_path):
    """Issue 24: flow-run names were random, and triplets had no flow of their own. Each stage's
    flow (triplets included) names its runs `<run directory>/<stage>`."""
    import prefect.runtime.flow_run

    from perfalign.flows.align import align, build_triplets_flow
    from perfalign.flows.evaluate import evaluate as evaluate_flow
    from perfalign.flows.perf import build_codecontests_perf
    from perfalign.flows.pipeline import pipeline
    from perfalign.flows.synth import generate_synthetic as generate_synthetic_flow

    run = tmp_path / "myrun"
    flows = {build_codecontests_perf: ("out", run / "codecontests_perf", "myrun/codecontests_perf"),
             generate_synthetic_flow: ("out", run / "synthetic", "myrun/synthetic"),
             build_triplets_flow: ("out", run / "triplets", "myrun/triplets"),
             align: ("workdir", run / "align", "myrun/align"),
             evaluate_flow: ("out", run / "evaluate", "myrun/evaluate"),
             pipeline: ("out", run, "myrun/pipeline")}
    for fl, (param, value, want) in flows.items():
        monkeypatch.setattr(prefect.runtime.flow_run, "parameters", {param: str(value)}, raising=False)
        assert fl.flow_run_name is not None and fl.flow_run_name() == want, (fl.name, want)
    assert build_triplets_flow.name == "build_triplets"


def test_a_real_build_publishes_only_named_artifacts(prefect_server, tmp_path):
    """Issue 24: the build's only artifact had `key: null` and never showed on the Artifacts page.
    A real (one-problem) build's flow run is `<run>/codecontests_perf` and every artifact it
    publishes has a key: the summary table and the progress."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        ArtifactFilter,
        ArtifactFilterFlowRunId,
        FlowRunFilter,
        FlowRunFilterName,
    )

    from perfalign.config.tables import PerfSettings
    from perfalign.flows.perf import run_build

    run = f"run{uuid.uuid4().hex[:6]}"
    sample = ROOT / "data" / "codecontests_sample" / "data"
    summary = run_build(str(tmp_path / run / "codecontests_perf"),
                        PerfSettings(source=str(sample), limit_problems=1, repeats=1, max_tests=1), workers=2)
    assert summary["failed_batches"] == 0 and summary["status"].get("measured", 0) >= 1, summary

    async def read():
        async with get_client() as client:
            (fr,) = await client.read_flow_runs(
                flow_run_filter=FlowRunFilter(name=FlowRunFilterName(any_=[f"{run}/codecontests_perf"])))
            return await client.read_artifacts(
                artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[fr.id])))

    arts = asyncio.run(read())
    assert arts and all(a.key for a in arts), [(a.key, a.type) for a in arts]
    keys = {a.key: a.type for a in arts}
    assert keys[f"{run}-codecontests-perf"] == "table" and keys[f"{run}-codecontests-perf-progress"] == "progress"
