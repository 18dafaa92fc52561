"""The evaluation scores its serial task groups side by side (their programs share the sandbox's
slots) and a task with threaded programs alone, after them; the results keep the task order."""
import threading
from types import SimpleNamespace

from perfalign.evaluation.evaluate import score_tasks
from perfalign.evaluation.probe_sessions import probes_serial
from perfalign.evaluation.records import BaselineResult, EvalPrompt, SampleResult, Scored
from perfalign.evaluation.sandbox_jobs import jobs_serial
from perfalign.evaluation.tasks.base import EvalTask
from perfalign.evaluation.tasks.registry import TASKS


class _Task(EvalTask):
    def __init__(self, name, serial, log, meet=None):
        self.name, self.labels, self._serial, self.log, self.meet = name, {name: name}, serial, log, meet

    def load(self, config):
        return [], []

    def serial(self, prompts):
        return self._serial

    def score(self, prompts, responses, run):
        self.log.append(("start", self.name))
        if self.meet:  # ends only once the other serial task has started: both ran at once
            mine, other = self.meet
            mine.set()
            assert other.wait(60), f"{self.name}: the other serial task did not run beside it"
        self.log.append(("end", self.name))
        samples = [SampleResult(m, p.task, p.prompt_id, 0, "fence", "python3", "OK", True, 1.0, 1.0, 1.0, "sha")
                   for m in responses for p in prompts]
        baselines = {p.prompt_id: BaselineResult(p.prompt_id, p.task, "cpu", 1.0, "OK", "measured") for p in prompts}
        return Scored(samples, baselines, {self.name: True})


def _prompt(task, spec=None):
    return EvalPrompt(task, f"{task}/1", "write it", "python3", "cpu", spec)


def test_serial_tasks_side_by_side_then_the_others(monkeypatch):
    log: list[tuple[str, str]] = []
    a, b = threading.Event(), threading.Event()
    tasks = [_Task("t-alone", False, log), _Task("t-one", True, log, (a, b)), _Task("t-two", True, log, (b, a))]
    for t in tasks:
        monkeypatch.setitem(TASKS, t.name, t)
    prompts = [_prompt(t.name) for t in tasks]
    notes: dict = {}
    samples, baselines = score_tasks(prompts, {"m": [["x"]] * 3}, SimpleNamespace(), notes)
    assert [s.prompt_id for s in samples] == ["t-alone/1", "t-one/1", "t-two/1"]  # the task order
    assert set(baselines) == {"t-alone/1", "t-one/1", "t-two/1"} and set(notes) == {"t-alone", "t-one", "t-two"}
    # the task with threaded programs started after both serial ones ended
    assert log.index(("start", "t-alone")) > max(log.index(("end", "t-one")), log.index(("end", "t-two")))


def test_which_tasks_are_serial():
    assert jobs_serial([_prompt("c", SimpleNamespace(parallel=False))])
    assert not jobs_serial([_prompt("c", SimpleNamespace(parallel=p)) for p in (False, True)])
    assert probes_serial([_prompt("p", SimpleNamespace(threads=1, clock="cpu"))])
    assert not probes_serial([_prompt("p", SimpleNamespace(threads=4, clock="wall"))])  # OpenMP: alone
    assert not probes_serial([_prompt("p", SimpleNamespace(threads=1, clock="wall"))])  # MPI ranks: alone
    assert TASKS["codecontests"].serial([_prompt("codecontests", SimpleNamespace(parallel=False))])
    assert not EvalTask.serial(TASKS["codecontests"], [])  # the default: a task runs alone unless it says
