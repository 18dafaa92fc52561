"""End to end on the embedded profile, small: warm-up, two SQD stages of GRPO through TRL's
GRPOTrainer with rewards from Dask benchmark workers, Parquet rollouts, archive, summary."""
from __future__ import annotations

import pyarrow.parquet as pq

from perfalign.config.tables import preset
from perfalign.grpo.records import read_rollouts
from perfalign.grpo.train import run_grpo


def test_embedded_grpo_end_to_end(tmp_path):
    from perfalign.grpo.measure import MeasureSettings

    cfg = preset("grpo", "embedded", out_dir=str(tmp_path / "run"), arm="sqd", schedule="none:1;all:2",
                 num_generations=4, warmup_steps=30, n_workers=1,
                 measure=MeasureSettings(repeats=2, max_repeats=2, target_s=0.05, peak_seconds=0.1, peak_n=256))
    summary = run_grpo(cfg)
    rows = read_rollouts(cfg.out_dir).to_pylist()
    assert len(rows) == 3 * 4  # every rollout of every step recorded
    assert [s["step"] for s in summary["steps"]] == [1, 2, 3]
    # each step logs its withheld share (records, summary and TRL's log), here nothing withheld
    assert all(s["withheld_share"] == 0.0 and s["withheld_causes"] == {} for s in summary["steps"])
    assert summary["withheld_share"] == 0.0 and not any(r["withheld"] for r in rows)
    assert {r["stage"] for r in rows} == {"s0:none", "s1:all"}
    for r in rows:
        assert r["tier"] in ("format", "library", "compile", "timeout", "runtime", "verification", "ok")
        assert (r["gflops"] is not None) == (r["tier"] == "ok")
        if r["tier"] == "ok":
            assert r["reward"] == r["gflops"] and r["peak_gflops"] > 0
    # stage 'none' permits no technique: any technique there was a format violation
    for r in rows:
        if r["stage"] == "s0:none" and r["techniques"]:
            assert r["tier"] == "format"
    assert len(summary["generation_s"]) == 3 and len(summary["reward_latency_s"]) == 3
    assert sum(summary["niches_filled"].values()) == len({r["niche"] for r in rows if r["tier"] == "ok"})
    assert pq.read_table(tmp_path / "run" / "archive.parquet").num_rows == summary["niches_filled"]["dgemm"]
