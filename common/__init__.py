"""The bottom layer: pieces every other package shares and that import nothing of perfalign.

languages (the one language table), plausibility (the one speedup/reward plausibility policy),
equations (the paper's equations), prompts (the paper's prompt formats), fileio (atomic writes),
paths (the one cache root), progress (the one progress mechanism), concurrency (bounded maps),
outcomes (the one withheld-or-penalized policy of every reward path).
"""
