"""The evaluation tasks (paper §VI), one file each, every one an ``EvalTask`` (base.py):
``load(config)`` -> its prompts, ``score(prompts, responses, run)`` -> every sample's result and
every prompt's baseline. registry.py maps the names ``EvalConfig.tasks`` selects to the tasks.

codecontests (held-out CodeContests-Perf problems), pareval (a ParEval checkout or the bundled
sample), polybench (a PolyBench/C checkout or the bundled sample), controlled (the controlled
task's held-out prompts), kernelbench (a KernelBench checkout, scored by kernelenv).
"""
