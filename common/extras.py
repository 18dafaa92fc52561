"""Optional parts of perfalign (pyproject's extras) and the one error a missing one raises.

The README's set-up installs every extra (``.[all]``); a slimmer install gets a one-line error
naming the extra when it first uses a feature that needs one."""
from __future__ import annotations

import importlib
from types import ModuleType

# extra -> what it enables (the list in pyproject.toml's [project.optional-dependencies])
EXTRAS = {
    "docker": "the docker sandbox backend",
    "dask": "Dask scale-out (perf build --dask-address, GRPO benchmark workers)",
    "llm": "Gemini / OpenAI-compatible LLM backends for synthetic pairs",
    "triton": "Triton kernels in the kernel environment",
    "smollm2": "the SmolLM2-135M model shipped as a wheel",
    "lora": "LoRA training (a stage's lora_r > 0; benchmarks/scale_training.py --lora)",
}


class MissingExtra(ImportError):
    pass


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` or fail in one line that names the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingExtra(f"{EXTRAS[extra]} needs the optional extra '{extra}' ({module} is not installed): "
                           f"pip install 'perfalign[{extra}]'") from e
