"""The Prefect flow `grpo` through ``grpo_command`` (what `perfalign grpo` calls): a tiny run
writes Parquet rollouts per arm x seed, the report and the figures."""
from __future__ import annotations

import json

from perfalign.grpo.records import read_rollouts


def test_grpo_command_runs_the_flow(prefect_server, tmp_path):
    from perfalign.flows.grpo import grpo_command

    out = tmp_path / "grpo"
    report = grpo_command(out=str(out), seeds=[0], arms=["sqd", "control"], schedule="none;all", steps_per_stage=1,
                          num_generations=4, n_workers=1, warmup_steps=20)
    assert set(report["arms"]) == {"sqd", "control"}
    for arm in ("sqd", "control"):
        rows = read_rollouts(out / f"{arm}-seed0").to_pylist()
        assert len(rows) == 2 * 4 and all(r["tier"] for r in rows)
        assert {r["arm"] for r in rows} == {arm}
    saved = json.loads((out / "report.json").read_text())
    assert saved["arms"]["sqd"]["seeds"] == 1
    for path in saved["figures"].values():
        assert (out / path.split("/")[-1]).stat().st_size > 1000
