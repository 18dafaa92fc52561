"""perfalign.evaluation: the evaluation of "Performance-Aligned LLMs for Generating Fast Code"
(§VI, §VII-D, §VIII): code generation on held-out contest problems and ParEval-style tasks,
code optimization on PolyBench-style kernels; pass@k (Eq. 9) and speedup_n@k (Eq. 10).

    from perfalign.evaluation import EvalConfig, ModelSpec, evaluate, models_from_run_dir
    cfg = EvalConfig.embedded(models=models_from_run_dir("runs/align"), codecontests_dir="runs/ccperf")
    report = evaluate(cfg, "runs/eval")        # report.md, report.json, figures, samples.jsonl

Modules: metrics (Eq. 9, 10), config (EvalConfig, ModelSpec), tasks / contests / pareval /
polybench (prompts and how to run them), drivers (the bundled samples' C++ timing drivers),
generation (HF models, oracle), execution (sandbox runs), scoring, stages (fine-tuning metrics),
report, plots. The real suites from a user's checkout: pareval_suite, polybench_suite (loaders),
probe / probe_cpp / cxxsig (the two translation units of a probe), transcript (the per-call
fingerprints), harness (scoring that a program cannot game), contest_score and score_one (one
candidate, one score: `perfalign eval score`).
Nothing heavy (torch, transformers, matplotlib) is imported until it is used.

    from perfalign.evaluation.score_one import score_candidate
    score, info = score_candidate("pareval", "02_dense_la_gemm", code, model="omp", pareval_dir="ParEval")
"""
from .config import EvalConfig, ModelSpec
from .evaluate import evaluate
from .metrics import mean_pass_at_k, pass_at_k, sample_speedup, speedup_at_k, speedup_n_at_k
from .report import EvalReport, load_report, write_report
from .stages import finetune_metrics, models_from_run_dir

__all__ = [
    "EvalConfig", "ModelSpec", "evaluate", "EvalReport", "load_report", "write_report",
    "pass_at_k", "mean_pass_at_k", "sample_speedup", "speedup_at_k", "speedup_n_at_k",
    "finetune_metrics", "models_from_run_dir",
]
