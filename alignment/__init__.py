"""perfalign.alignment: SFT, reward model, RLPF (PPO) and DPA of "Performance-Aligned LLMs for
Generating Fast Code" (§V, §VII), on TRL 1.12.

Each stage is a plain function taking a Config dataclass (its defaults = the paper's; the
embedded profile, the tiny local model on 2 CPU cores, is config/profiles/embedded.toml:
``perfalign.config.tables.preset("sft")``) and writing model, tokenizer,
``stage_config.json`` and ``metrics.json`` into ``cfg.output_dir``:

    from perfalign.alignment.sft import SFTStageConfig, run_sft                      # Eq. 1 perplexity
    from perfalign.alignment.reward_model import RewardStageConfig, train_reward_model  # Eq. 2 loss, Eq. 5 accuracy
    from perfalign.alignment.rlpf import RLPFStageConfig, run_rlpf                   # Eq. 4 reward, Eq. 6 objective
    from perfalign.alignment.dpa import DPAStageConfig, run_dpa                      # Eq. 7 loss, Eq. 8 accuracy
    from perfalign.alignment.stages import STAGES, wire                           # the stage table, run paths

Inputs come from ``perfdata.triplets.build_triplets`` (triplets + SFT prompts with splits) and,
for RLPF's execution reward, a CodeContests-Perf folder. Equations: ``common.equations``;
PPO details around TRL (adaptive KL, world-wide advantage whitening): ``alignment.rlpf_trainer``; the
controlled task a tiny model can learn (``perfdata.controlled``), samples classified: ``alignment.proof``.
Nothing heavy is imported here: import the stage modules you need.
"""
