"""Flow `grpo`: thin Prefect wiring around grpo/ (online GRPO with real-machine GFLOPS rewards
and Staged Quality-Diversity). One Prefect task per arm x seed (coarse: each is minutes of
training; the benchmark workers are a Dask cluster of their own, shared by the runs)."""
from __future__ import annotations

from .env import configure_prefect

configure_prefect()

from prefect import flow  # noqa: E402


@flow(name="grpo")
def grpo_flow(out: str, profile: str = "embedded", seeds: list[int] | None = None, arms: list[str] | None = None,
              overrides: dict | None = None) -> dict:
    """Run the arms for the seeds and write rollouts (Parquet), archives, report and figures."""
    from perfalign.grpo.experiment import ARMS, run_experiment
    from perfalign.grpo.train import GrpoRunConfig

    make = GrpoRunConfig.production if profile == "production" else GrpoRunConfig.embedded
    base = make(out_dir=out, **(overrides or {}))
    return run_experiment(base, out, list(seeds or [0]), tuple(arms or ARMS))


def grpo_command(*, profile: str = "embedded", out: str = "runs/grpo", seeds: list[int] | None = None,
                 arms: list[str] | None = None, steps_per_stage: int | None = None, steps: int | None = None,
                 schedule: str | None = None, num_generations: int | None = None, workers: int = 2,
                 cpus_per_worker: int = 1, dask_address: str | None = None, polybench_dir: str | None = None,
                 tasks: list[str] | None = None, model: str | None = None, learning_rate: float | None = None,
                 warmup_steps: int | None = None, warmup_prior: str | None = None, reward_mode: str = "gflops",
                 reuse_measurements: bool = True) -> dict:
    """`perfalign grpo`: online GRPO whose rewards are GFLOPS measured on Dask benchmark workers.

    Options (CLI flag = keyword, dashes for underscores):
      --profile embedded|production  embedded: the tiny local model learns the controlled spec
                                     family for DGEMM (n=256) on CPU; production: a 14B coder
                                     writes free C for DGEMM + PolyBench 2mm/syrk/jacobi-2d (GPU).
      --out DIR                      run directory: <arm>-seed<N>/rollouts/*.parquet (tier and
                                     GFLOPS of every rollout), archive.parquet, summary.json;
                                     report.json and the figures at the top.
      --seeds 0,1,2                  seeds (each arm runs once per seed, same warm start).
      --arms sqd,grpo,control        sqd: staged QD; grpo: plain GRPO (all techniques);
                                     control: same pipeline, learning rate 0 (no RL).
      --steps-per-stage N            GRPO steps of each SQD stage (default 3 embedded).
      --steps N                      total steps of grpo/control (default: as many as SQD).
      --schedule "none;blocking;..." SQD stages: '+'-joined techniques (openmp, simd, blocking,
                                     unroll), 'none', 'all'; ':N' sets a stage's steps.
      --num-generations N            completions per prompt (the GRPO group).
      --workers N                    LocalCluster benchmark workers (ignored with --dask-address).
      --cpus-per-worker N            cores pinned per worker = the program's thread budget.
      --dask-address tcp://host:8786 use a running Dask scheduler instead of a LocalCluster.
      --polybench-dir DIR            PolyBench/C 4.2.1 checkout (needed for 2mm/syrk/jacobi-2d).
      --tasks dgemm,2mm,...          problems (the spec family expands DGEMM only).
      --model NAME|PATH              base model ('embedded' = the tiny local Llama).
      --learning-rate X, --warmup-steps N   GRPO learning rate; spec-format warm-up steps.
      --warmup-prior uniform|compliant|narrow   warm-up targets: every spec equally likely, or only
                                     the prompt's permitted techniques, each used with p=0.5
                                     (compliant) or p=0.15 (narrow: a conservative start).
      --reward-mode gflops|peak_fraction    reward of a correct program: GFLOPS, or percent of
                                     the worker's measured numpy/OpenBLAS DGEMM peak.
      --no-reuse-measurements        measure every rollout, even a program already measured.
    """
    from perfalign.grpo.reward import RewardTiers

    overrides: dict = {"n_workers": workers, "cpus_per_worker": cpus_per_worker, "dask_address": dask_address,
                       "polybench_dir": polybench_dir, "reuse_measurements": reuse_measurements,
                       "tiers": RewardTiers(ok_reward=reward_mode)}
    for key, val in (("steps_per_stage", steps_per_stage), ("steps", steps), ("schedule", schedule),
                     ("num_generations", num_generations), ("model", model), ("learning_rate", learning_rate),
                     ("warmup_steps", warmup_steps), ("warmup_prior", warmup_prior)):
        if val is not None:
            overrides[key] = val
    if tasks:
        overrides["tasks"] = tuple(tasks)
    return grpo_flow(out=out, profile=profile, seeds=list(seeds or [0]), arms=list(arms) if arms else None,
                     overrides=overrides)
