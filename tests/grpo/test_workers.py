"""Dask benchmark workers: each pinned to its own core, one program at a time, and a worker
killed mid-batch loses no rollout."""
from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from perfalign.grpo.measure import MeasureSettings, Rollout
from perfalign.grpo.spec_family import ORDERS
from perfalign.grpo.tasks import dgemm_task
from perfalign.grpo.workers import BenchmarkCluster

SETTINGS = MeasureSettings(repeats=2, max_repeats=2, target_s=0.05, peak_seconds=0.1, peak_n=256)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 cores")
def test_worker_killed_mid_batch_loses_no_rollout():
    tasks = {"dgemm": dgemm_task("reduced", threads=1)}
    rollouts = [Rollout(f"r{i}", "dgemm", f"order={o} tile={t} simd=0 omp=0 unroll=1", ("blocking",))
                for i, (o, t) in enumerate((o, t) for o in ORDERS for t in (0, 16))]
    with BenchmarkCluster(n_workers=2, cpus_per_worker=1, settings=SETTINGS) as cluster:
        pids = cluster.worker_pids()
        cpus = cluster.client.run(lambda: sorted(os.sched_getaffinity(0)))
        assert sorted(map(tuple, cpus.values())) == [(0,), (1,)]  # one core each, not shared
        victim = next(iter(pids.values()))
        killed = threading.Event()

        def kill_when_busy():
            # wait until the victim has started measuring (its first rollout is in flight)
            deadline = time.time() + 60
            while time.time() < deadline and not killed.is_set():
                time.sleep(0.5)
                if cluster.client.processing() and any(cluster.client.processing().values()):
                    time.sleep(2.0)
                    os.kill(victim, signal.SIGKILL)
                    killed.set()

        t = threading.Thread(target=kill_when_busy, daemon=True)
        t.start()
        records = cluster.evaluate(rollouts, tasks)
        t.join(timeout=5)
        assert killed.is_set()
        new_pids = set(cluster.worker_pids().values())
    assert victim not in new_pids  # the nanny started a fresh worker
    assert [r["rollout_id"] for r in records] == [r.rollout_id for r in rollouts]
    assert all(r["tier"] == "ok" and r["gflops"] > 0 for r in records), [(r["tier"], r["message"]) for r in records]
    # no record comes from the dead worker after its death unless it finished before: every
    # record names a live-or-earlier worker, and every rollout has exactly one record
    assert len({r["rollout_id"] for r in records}) == len(rollouts)
    assert {tuple(r["worker_cpus"]) for r in records} <= {(0,), (1,)}
