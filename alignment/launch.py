"""Entry point for multi-GPU runs: ``accelerate launch --config_file alignment/accelerate_fsdp.yaml
-m perfalign.alignment.launch STAGE CONFIG.json`` (STAGE: sft, reward, rlpf, dpa; the JSON holds the
stage Config's fields, e.g. ``json.dumps(dataclasses.asdict(cfg))``)."""
from __future__ import annotations

import argparse
import json
import sys

from .stage_config import config_from_json
from .stages import STAGES


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m perfalign.alignment.launch")
    ap.add_argument("stage", choices=list(STAGES))
    ap.add_argument("config", help="JSON file with the stage config's fields")
    args = ap.parse_args(argv)
    with open(args.config) as f:
        fields = json.load(f)
    stage = STAGES[args.stage]
    result = stage.run(config_from_json(stage.config, fields))
    print(json.dumps({"run_dir": str(result.run_dir), "metrics": result.metrics}, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
