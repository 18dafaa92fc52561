"""perfalign.grpo: online GRPO with real-machine GFLOPS rewards and Staged Quality-Diversity
(after arXiv 2602.12049, "Improving HPC Code Generation Capability of LLMs via Online
Reinforcement Learning with Real-Machine Benchmark Rewards").

Plain library code (no Prefect): tasks and their trusted harness (tasks.py), the reward tiers
(reward.py), static checks for libraries and techniques (static.py), the controlled spec format
the tiny model learns (spec.py), measurement on a worker (measure.py), the Dask benchmark
workers (workers.py), SQD stages and archive (sqd.py), prompts, Parquet records, the TRL
GRPOTrainer loop (train.py) and plots. Details the abstract does not give are this package's
design and are documented as such where they are made.
"""
