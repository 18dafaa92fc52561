"""Benchmark workers on Dask ``distributed``: rollouts go to a cluster (a LocalCluster by
default, or a running scheduler at ``dask_address``); every worker runs one program at a time
(one thread, one sandbox slot) on its own pinned cores, so measurements contend neither with
each other nor with training (which runs in the client process).

A worker that dies mid-batch loses no rollout: Dask reschedules the tasks it held, and any
future that still fails with a worker-loss error is resubmitted here (``max_resubmits``); the
record counts the attempts.
"""
from __future__ import annotations

import logging
import os

try:
    from distributed.diagnostics.plugin import WorkerPlugin
except ImportError:  # no [dask] extra: local evaluation works; BenchmarkCluster says what is missing
    WorkerPlugin = object

from perfalign.common.outcomes import judge
from perfalign.sandbox import SandboxSettings

from .measure import MeasureSettings, Rollout, evaluate_rollout
from .reward import GrpoRewardTiers, tier_reward
from .tasks import GrpoTask

log = logging.getLogger("perfalign.grpo")
_CPUS_ENV = "PERFALIGN_GRPO_CPUS"


def pin_current_thread() -> list[int]:
    """Pin the calling thread (whose children, the sandboxed programs, inherit it) to the
    worker's cores, as set by :class:`PinCores`."""
    cpus = os.environ.get(_CPUS_ENV)
    if cpus:
        os.sched_setaffinity(0, {int(c) for c in cpus.split(",")})
    return sorted(os.sched_getaffinity(0))


def _pin_process(cpus: set[int]) -> None:
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), cpus)
        except OSError:
            pass


class PinCores(WorkerPlugin):
    """Dask worker plugin: worker number i (LocalCluster names workers 0, 1, ...) gets cores
    [i*cpus, (i+1)*cpus) of those the machine lets it use (wrapping around when there are more
    workers than cores, which a warning flags). Workers of a real cluster with non-numeric
    names keep the affinity their deployment gave them."""

    name = "perfalign-pin-cores"

    def __init__(self, cpus_per_worker: int = 1) -> None:
        self.cpus = max(1, int(cpus_per_worker))

    def setup(self, worker) -> None:
        try:
            index = int(worker.name)
        except (TypeError, ValueError):
            return
        cores = sorted(os.sched_getaffinity(0))
        start = (index * self.cpus) % len(cores)
        mine = {cores[(start + k) % len(cores)] for k in range(self.cpus)}
        if (index + 1) * self.cpus > len(cores):
            log.warning("worker %s shares cores: %d workers x %d cpus > %d cores", index, index + 1, self.cpus,
                        len(cores))
        os.environ[_CPUS_ENV] = ",".join(map(str, sorted(mine)))
        _pin_process(mine)


def measure_remote(rollout: Rollout, task: GrpoTask, settings: MeasureSettings, tiers: GrpoRewardTiers,
                   sandbox: SandboxSettings) -> dict:
    """The Dask task: pin, measure, return the record."""
    pin_current_thread()
    return evaluate_rollout(rollout, task, settings, tiers, sandbox)


def _is_worker_loss(exc: BaseException) -> bool:
    from distributed.client import FutureCancelledError
    from distributed.comm.core import CommClosedError
    from distributed.scheduler import KilledWorker

    return isinstance(exc, (KilledWorker, CommClosedError, FutureCancelledError, OSError, TimeoutError))


class BenchmarkCluster:
    """Dispatches rollouts to Dask benchmark workers and gathers their records."""

    def __init__(self, n_workers: int = 2, cpus_per_worker: int = 1, address: str | None = None,
                 settings: MeasureSettings | None = None, tiers: GrpoRewardTiers | None = None,
                 max_resubmits: int = 3, sandbox: SandboxSettings = SandboxSettings()) -> None:
        self.settings = settings or MeasureSettings()
        self.sandbox = sandbox
        self.tiers = tiers or GrpoRewardTiers()
        self.max_resubmits = max_resubmits
        self.address = address
        self.cluster = self.client = None
        self.n_workers, self.cpus_per_worker = n_workers, cpus_per_worker
        self.resubmitted = 0

    def start(self) -> "BenchmarkCluster":
        from perfalign.common.extras import require

        require("distributed", "dask")
        from distributed import Client, LocalCluster

        if self.address:
            self.client = Client(self.address)
        else:
            self.cluster = LocalCluster(n_workers=self.n_workers, threads_per_worker=1, processes=True,
                                        dashboard_address=None, silence_logs=logging.ERROR)
            self.client = Client(self.cluster)
        self.client.register_plugin(PinCores(self.cpus_per_worker), name=PinCores.name)
        return self

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        self.client = self.cluster = None

    def __enter__(self) -> "BenchmarkCluster":
        return self.start() if self.client is None else self

    def __exit__(self, *exc) -> None:
        self.close()

    def worker_pids(self) -> dict[str, int]:
        return self.client.run(os.getpid)

    def evaluate(self, rollouts: list[Rollout], tasks: dict[str, GrpoTask]) -> list[dict]:
        """Records of ``rollouts`` in their order; a rollout whose worker was lost is resubmitted
        (up to ``max_resubmits`` times). After that, or when measuring it raised, its record says
        so and it is penalized as a runtime error (common.outcomes: a rollout that keeps killing
        its workers, or makes the measurement raise, may well be the cause)."""
        from distributed import as_completed

        if self.client is None:
            self.start()
        records: list[dict | None] = [None] * len(rollouts)
        attempts = [0] * len(rollouts)

        def submit(i: int):
            r = rollouts[i]
            attempts[i] += 1
            fut = self.client.submit(measure_remote, r, tasks[r.task], self.settings, self.tiers, self.sandbox,
                                     pure=False, key=f"grpo-{r.rollout_id}-{attempts[i]}")
            index_of[fut.key] = i
            return fut

        index_of: dict[str, int] = {}
        pending = as_completed([submit(i) for i in range(len(rollouts))])
        for fut in pending:
            i = index_of[fut.key]
            try:
                rec = fut.result()
            except Exception as exc:  # noqa: BLE001 - a lost worker or a bug: never a lost rollout
                if _is_worker_loss(exc) and attempts[i] <= self.max_resubmits:
                    self.resubmitted += 1
                    log.warning("rollout %s lost with its worker (%s): resubmitted", rollouts[i].rollout_id,
                                type(exc).__name__)
                    pending.add(submit(i))
                    continue
                outcome = judge("worker_lost" if _is_worker_loss(exc) else "measurement_raised",
                                f"{type(exc).__name__}: {exc}"[:2000])
                rec = {**rollouts[i].__dict__, "permitted": list(rollouts[i].permitted), "tier": "runtime",
                       "reward": tier_reward("runtime", None, None, self.tiers), "withheld": outcome.withheld,
                       "cause": outcome.cause, "message": outcome.reason}
            rec["attempts"] = attempts[i]
            records[i] = rec
        return records  # type: ignore[return-value]
