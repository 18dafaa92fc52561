"""Scoring for real in the sandbox: the reference-as-candidate oracle on a handful of level-1 and
level-2 problems (correct, about 1x), our own C++ kernels that beat eager, a Triton kernel under
TRITON_INTERPRET=1 (correctness only), the auto scale, the CLI, and (slow) the torch.compile
baseline. Small scales and few trials: seconds of compute, dominated by torch start-ups.

The speed bounds below are wide sanity checks of the oracles (the reference is ~1x, a fused kernel
is faster), not performance targets: those are in benchmarks/kernel_*.py."""
from __future__ import annotations

import concurrent.futures as cf
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

KB = Path(__file__).resolve().parents[3] / "shared" / "external" / "kernelbench"
ORACLES = Path(__file__).resolve().parents[2] / "kernelenv" / "oracles"
from perfalign.sandbox.environments import torch_site  # noqa: E402

pytestmark = [pytest.mark.skipif(not KB.exists(), reason=f"KernelBench is not at {KB} (../shared/external)"),
              pytest.mark.skipif(torch_site().dir is None,
                                 reason=f"the sandbox cannot use torch: {torch_site().reason}")]

REFERENCE_PROBLEMS = ["level1/19_ReLU.py", "level1/23_Softmax.py", "level1/47_Sum_reduction_over_a_dimension.py",
                      "level1/1_Square_matrix_multiplication_.py",
                      "level1/50_conv_standard_2D__square_input__square_kernel.py",
                      "level2/12_Gemm_Multiply_LeakyReLU.py"]


def _config(**kw):
    from perfalign.kernelenv import ScoreConfig

    base = dict(scale=1 / 64, compile_baseline=False, trials=10, min_trials=5, time_budget_s=0.3)
    return ScoreConfig(**{**base, **kw})


@pytest.fixture(scope="module")
def scorer():
    from perfalign.kernelenv import Scorer
    from perfalign.sandbox import Sandbox

    with Sandbox(workers=2) as sb:
        yield Scorer(_config(), sandbox=sb)


def _score_all(scorer, jobs):
    with cf.ThreadPoolExecutor(2) as pool:
        return list(pool.map(lambda j: scorer.score(*j), jobs))


@pytest.mark.timing
def test_reference_as_candidate_is_correct_at_about_1x(scorer):
    import dataclasses

    from perfalign.kernelenv import Scorer, load_problem, reference_candidate

    ref_scorer = Scorer(dataclasses.replace(scorer.config, allow_reference_ops=True), sandbox=scorer.sandbox)
    problems = [load_problem(KB / p) for p in REFERENCE_PROBLEMS]
    results = _score_all(ref_scorer, [(p, reference_candidate(p), "reference") for p in problems])
    for p, s in zip(problems, results):
        detail = f"{p.name}: {s.verdict} {s.speedup_eager} {s.flags} {s.message[:300]}"
        assert s.verdict == "correct" and not s.hack_flags, detail
        assert s.scale == 1 / 64 and s.sizes and "cpu:cgroup" in s.flags
        assert len(s.correctness) == 7 and all(t["ok"] for t in s.correctness)
        assert len(s.times_s) == len(s.eager_times_s) == s.timing["rounds"] >= 5, detail
        if "unmeasurable" in s.flags:  # the reference alone was as noisy: withheld, never made up
            assert s.speedup_eager is None and s.reward is None and s.timing["blame"] == "machine", detail
            continue
        # the truth is 1.0: within the run's own error estimate (3 SE, at least 10%)
        band = max(0.1, 3 * (s.timing["rel_se"] or 0.0))
        if "erratic_timing" not in s.flags:
            assert abs(s.speedup_eager - 1.0) < band, detail
        assert s.speedup_eager < 1.0 + band and s.reward == pytest.approx(s.speedup_eager), detail
    assert any("shapes:varied" in s.flags for s in results)
    # without the allowance, the same program calls the reference operator: flagged
    plain = scorer.score(problems[0], reference_candidate(problems[0]), "reference")
    assert plain.verdict == "correct" and "hack:reference_op:aten::relu" in plain.flags and plain.reward < 0


@pytest.mark.timing
def test_our_cpu_kernels_beat_eager(scorer):
    from perfalign.kernelenv import load_problem

    stems = ["100_HingeLoss", "94_MSELoss", "88_MinGPTNewGelu", "25_Swish"]
    problems = [load_problem(KB / "level1" / f"{s}.py") for s in stems]
    results = _score_all(scorer, [(p, (ORACLES / "level1" / f"{s}.py").read_text(), s)
                                  for p, s in zip(problems, stems)])
    for s in results:
        detail = f"{s.problem}: {s.verdict} {s.speedup_eager} {s.flags} {s.message[:300]}"
        assert s.verdict == "correct" and not s.hack_flags, detail
        assert s.candidate_compile_s and max(s.candidate_compile_s) < 10, detail  # plain g++ inside the sandbox
    # the one-pass reductions replace three passes with temporaries: clearly faster (a speedup the gate
    # withholds, the reference alone too noisy on this host, is judged on its pre-gate estimate)
    fast = [s.speedup_eager if s.speedup_eager is not None else s.timing["estimate"] for s in results[:2]]
    assert min(fast) > 1.2, [(s.problem, s.speedup_eager, s.flags) for s in results]


def test_compile_errors_and_wrong_kernels(scorer):
    from perfalign.kernelenv import load_problem

    p = load_problem(KB / "level1" / "25_Swish.py")
    bad_cpp = ("import torch\nfrom perfalign_kernels import load_cpp\n_lib = load_cpp('int main( {', 'broken')\n"
               "class ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n")
    wrong = (ORACLES / "level1" / "25_Swish.py").read_text().replace("v / (1.f + std::exp(-v))",
                                                                     "v / (2.f + std::exp(-v))")
    raises = ("import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
              "        raise RuntimeError('boom')\n")
    shape = ("import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
             "        return (x * torch.sigmoid(x))[:1]\n")
    out = {s.candidate: s for s in scorer.score_many(p, [("bad_cpp", bad_cpp), ("wrong", wrong), ("raises", raises),
                                                          ("shape", shape), ("no_model", "x = 1\n")])}
    assert out["bad_cpp"].verdict == "load_error" and "C++ compile error" in out["bad_cpp"].message
    assert out["wrong"].verdict == "incorrect" and "values differ" in out["wrong"].message
    assert out["raises"].verdict == "runtime_error" and "boom" in out["raises"].message
    assert out["shape"].verdict == "incorrect" and "shape" in out["shape"].message
    assert out["no_model"].verdict == "format_error"
    rewards = [out[k].reward for k in ("no_model", "bad_cpp", "raises", "wrong")]
    assert rewards == sorted(rewards) and all(r < 0 for r in rewards)


def test_triton_kernel_under_the_interpreter():
    from perfalign.kernelenv import Scorer, load_problem

    p = load_problem(KB / "level1" / "25_Swish.py")
    with Scorer(_config(scale=1 / 256, interpret=True, trials=5, time_budget_s=0.05)) as s:
        r = s.score(p, (ORACLES / "triton" / "level1" / "25_Swish.py").read_text(), "triton")
    assert r.verdict == "correct" and not r.hack_flags, (r.verdict, r.flags, r.message[:500])


def test_auto_scale_and_cli_score(tmp_path):
    from perfalign.cli.main import app
    from perfalign.kernelenv import Scorer, load_problem, reference_candidate

    p = load_problem(KB / "level1" / "19_ReLU.py")
    with Scorer(_config(scale=None, target_s=0.005)) as s:
        scale, info = s.scale_for(p)
    assert 0 < scale < 1 and info["mode"] == "auto" and info["eager_s"] <= 0.005
    assert scale == 2.0 ** -max(t["k"] for t in info["tried"])
    cand = tmp_path / "ref.py"
    cand.write_text(reference_candidate(p))
    res = CliRunner().invoke(app, ["kernel", "score", "--problem", str(p.path), "--candidate", str(cand), "--scale",
                                   "0.004", "--trials", "5", "--no-compile-baseline", "--allow-reference-ops",
                                   "--json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.output.strip().splitlines()[-1])
    assert list(d)[:6] == ["verdict", "correct", "speedup_eager", "speedup_compile", "runtime_s", "flags"]
    assert d["verdict"] == "correct" and d["correct"] and d["speedup_compile"] is None and d["scale"] == 0.004
    bad = CliRunner().invoke(app, ["kernel", "score", "--problem", str(cand.parent / "missing.py"), "--candidate",
                                   str(cand), "--json"])
    assert bad.exit_code == 2


def test_the_cli_scores_in_the_configured_sandbox(tmp_path, monkeypatch):
    """[sandbox] (a profile's or --set) reaches the kernel scorer: the sandbox it opens (scoring itself
    replaced: what is checked is where it would run)."""
    from perfalign.cli.main import app
    from perfalign.kernelenv import KernelScore, Scorer

    seen = []

    def score(self, problem, source, name):
        seen.append((self.sandbox.name, self.sandbox.retries, self.sandbox.workers))
        return KernelScore(problem.name, name, "correct", True)

    monkeypatch.setattr(Scorer, "score", score)
    cand = tmp_path / "cand.py"
    cand.write_text("class ModelNew: pass\n")
    args = ["kernel", "score", "--problem", str(KB / "level1" / "19_ReLU.py"), "--candidate", str(cand), "--json"]
    assert CliRunner().invoke(app, args).exit_code == 0
    res = CliRunner().invoke(app, [*args, "--set", "sandbox.backend=local-unsafe", "--set", "sandbox.retries=5"])
    assert res.exit_code == 0, res.output
    assert seen[0][0] != "local-unsafe" and seen[1] == ("local-unsafe", 5, 1)  # one slot: timings never contend


def test_cli_eval_writes_the_report(tmp_path, prefect_server):
    from perfalign.cli.main import app

    probs = tmp_path / "problems" / "level1"
    probs.mkdir(parents=True)
    for stem in ("100_HingeLoss", "94_MSELoss"):
        (probs / f"{stem}.py").symlink_to(KB / "level1" / f"{stem}.py")
    (probs / "notes.py").write_text("x = 1\n")
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["kernel", "eval", "--problems", str(tmp_path / "problems"), "--candidates",
                                   str(ORACLES), "--out", str(out), "--scale", "0.0078125", "--trials", "5",
                                   "--no-compile-baseline", "--json"])
    assert res.exit_code == 0, res.output
    metrics = json.loads(res.output.strip().splitlines()[-1])
    assert metrics["n"] == 2 and metrics["correct_pct"] == 100.0
    scores = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    # under load a speedup may be withheld (the reference alone too noisy), never silently: it says why
    assert all("unmeasurable" in s["flags"] if s["speedup_eager"] is None else s["speedup_eager"] > 0
               for s in scores), [(s["speedup_eager"], s["flags"]) for s in scores]
    measured = [s for s in scores if s["speedup_eager"] is not None]
    assert (metrics["geomean_speedup_eager"] is None) == (not measured)
    report = json.loads((out / "report.json").read_text())
    assert [p["problem"] for p in report["problems"]] == ["level1/94_MSELoss", "level1/100_HingeLoss"]
    assert any("notes.py" in e["path"] for e in report["errors"])
    md = (out / "report.md").read_text()
    assert "fast_1" in md and "level1/100_HingeLoss" in md and len((out / "scores.jsonl").read_text().splitlines()) == 2


@pytest.mark.slow
def test_torch_compile_baseline(tmp_path):
    """The Inductor baseline: a cold compile in the sandbox (~20 s of CPU), then cached."""
    from perfalign.kernelenv import Scorer, load_problem

    p = load_problem(KB / "level1" / "88_MinGPTNewGelu.py")
    with Scorer(_config(compile_baseline=True), cache_dir=tmp_path) as s:
        base = s.baselines(p, 1 / 64)
        assert base["eager_s"] > 0 and base["compile_s"] > 0 and not base["cached"], base
        assert s.baselines(p, 1 / 64)["cached"]
        r = s.score(p, (ORACLES / "level1" / "88_MinGPTNewGelu.py").read_text(), "oracle")
    assert r.verdict == "correct"
    # measured against compile, unless the reference alone was too noisy here (withheld, flagged)
    assert (r.speedup_compile is not None and r.compile_s > 0) or ("unmeasurable" in r.flags
                                                                    and r.reward is None), r.flags


def test_reward_function_for_grpo(scorer):
    import dataclasses

    from perfalign.kernelenv import Scorer, load_problem, reference_candidate
    from perfalign.kernelenv.reward import extract_code, make_reward_function

    p = load_problem(KB / "level1" / "19_ReLU.py")
    assert extract_code("text\n```python\nA\n```\nmore\n```py\nB\n```") == "B\n"
    assert extract_code([{"role": "assistant", "content": "```\nC\n```"}]) == "C\n"
    fn = make_reward_function(Scorer(dataclasses.replace(scorer.config, allow_reference_ops=True),
                                     sandbox=scorer.sandbox), {"relu": p})
    good = "Here:\n```python\n" + reference_candidate(p) + "```"
    rewards = fn(prompts=["p", "p"], completions=[good, "I cannot write kernels."], problem=["relu", "relu"])
    # the plumbing: no code earns the format tier, a correct kernel a speedup (>= 0, above every
    # failure tier), or None where the machine could not measure it (the reference alone as noisy)
    assert rewards[1] == -1.0 and (rewards[0] is None or rewards[0] > 0), rewards


def test_torch_toolchain_is_read_only(sandbox):
    """Job(python3, toolchain="torch"): the host's torch on the program's path, not writable."""
    from perfalign.sandbox import Job, Limits, TestCase
    from perfalign.sandbox.environments import TORCH_GUEST, torch_site

    src = ("import os, torch\nprint(torch.__version__)\n"
           f"try:\n    open('{TORCH_GUEST}/torch/__init__.py', 'a')\n    print('writable')\n"
           "except OSError:\n    print('read-only')\n")
    r = sandbox.run_job(Job(src, "python3", [TestCase()], Limits(time_s=60, memory_mb=2048), keep_output=True,
                            toolchain="torch"))
    assert r.verdict.value == "OK", r.tests[0].message
    assert r.tests[0].output.split() == [torch_site().version, "read-only"]


def test_auto_scale_counts_the_output():
    """32768 x 64 @ 64 x 32768: small inputs, a 4 GB result. The auto scale counts the output's
    elements (on the meta device) and scales down instead of running out of memory."""
    import dataclasses

    from perfalign.kernelenv import Scorer, load_problem
    from perfalign.sandbox import Sandbox

    with Sandbox(workers=1) as sb:
        s = Scorer(dataclasses.replace(_config(), scale=None), sandbox=sb)
        scale, info = s.scale_for(load_problem(KB / "level1" / "7_Matmul_with_small_K_dimension_.py"))
    assert scale <= 1 / 8, info
    if not info.get("cached"):
        assert info["tried"][0]["why"] == "too large" and info["tried"][0]["elements"] > 1 << 30, info
