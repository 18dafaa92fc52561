"""perfalign.evaluation: the evaluation of "Performance-Aligned LLMs for Generating Fast Code"
(§VI, §VII-D, §VIII): code generation on held-out contest problems and ParEval-style tasks,
code optimization on PolyBench-style kernels; pass@k (Eq. 9) and speedup_n@k (Eq. 10).

    from perfalign.evaluation import evaluate, models_from_run_dir
    from perfalign.config.tables import preset  # EvalConfig under a profile (config/profiles/*.toml)
    cfg = preset("eval", models=models_from_run_dir("runs/align"), codecontests_dir="runs/ccperf")
    report = evaluate(cfg, "runs/eval")        # report.md, report.json, figures, samples.jsonl

Modules: tasks/ (the task interface, base.EvalTask: ``load(config)`` -> prompts, ``score(prompts,
responses, run)`` -> results, and for one candidate ``score_candidate(problem, code, request,
sandbox)``; one file per task: codecontests, pareval, polybench, controlled, kernelbench; registry
maps names to tasks; bundled: the bundled ParEval/PolyBench samples as probe problems),
sandbox_jobs and probe_sessions (the two ways a task's programs are run and judged: whole programs
as sandbox jobs, or probes of the measure/ harness), generation (HF models, oracle),
task_scores (per-sample results -> pass@k / speedup_n@k per model and task), run_models (the
models of an alignment run and their fine-tuning metrics), report, plots, metrics (Eq. 9, 10),
config (EvalConfig, ModelSpec); score_one (one candidate, one score: `perfalign eval score`
picks the suite's task).
Nothing heavy (torch, transformers, matplotlib) is imported until it is used.

    from perfalign.evaluation.score_one import score_candidate
    score, info = score_candidate("pareval", "02_dense_la_gemm", code, model="omp", pareval_dir="ParEval")
"""
from .config import EvalConfig, ModelSpec
from .evaluate import evaluate
from .metrics import mean_pass_at_k, pass_at_k, sample_speedup, speedup_at_k, speedup_n_at_k
from .records import EvalReport
from .report import load_report, write_report
from .run_models import finetune_metrics, models_from_run_dir

__all__ = [
    "EvalConfig", "ModelSpec", "evaluate", "EvalReport", "load_report", "write_report",
    "pass_at_k", "mean_pass_at_k", "sample_speedup", "speedup_at_k", "speedup_n_at_k",
    "finetune_metrics", "models_from_run_dir",
]
