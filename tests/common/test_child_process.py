"""common.child_process: a call in a fresh interpreter behaves like a local call (value,
exception, log records, progress reports), and never outlives its caller."""
from __future__ import annotations

import logging
import os
import threading
import time

import child_targets as t
import pytest

from perfalign.common.child_process import Cancelled, ChildDied, call_in_child
from perfalign.common.progress import listening


def test_value_logs_and_progress_come_back(caplog):
    seen = []
    with caplog.at_level(logging.INFO, logger="perfalign"), listening(lambda *a: seen.append(a)):
        out = call_in_child(t.work, 3, label="x", caller_pid=os.getpid())
    assert out == {"label": "x", "pid_differs": True, "sum": 6}
    assert seen == [("child work", i, 3) for i in (1, 2, 3)]
    msgs = [(r.name, r.levelno, r.getMessage()) for r in caplog.records]
    assert ("perfalign.test_child", logging.INFO, "working on x: 3 items") in msgs
    assert any(n == "perfalign.child" and "a print goes to stderr" in m for n, _, m in msgs)  # not the channel


def test_its_exception_is_raised_here_with_its_type():
    with pytest.raises(FileNotFoundError, match="no such input: /nope"):
        call_in_child(t.fail, "/nope")


def test_an_exception_that_does_not_pickle_arrives_as_its_text():
    with pytest.raises(RuntimeError, match="Unpicklable: boom"):
        call_in_child(t.fail_unpicklable)


def test_a_death_without_result_says_so_with_the_end_of_stderr():
    with pytest.raises(ChildDied, match=r"exited with -9 and no result: .*about to die"):
        call_in_child(t.die)


def test_stop_ends_the_child_at_once(tmp_path):
    stop = threading.Event()
    threading.Timer(1.0, stop.set).start()
    t0 = time.monotonic()
    with pytest.raises(Cancelled):
        call_in_child(t.sleep_and_record, 60.0, str(tmp_path / "pid"), stop=stop)
    assert time.monotonic() - t0 < 20
    pid = int((tmp_path / "pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
