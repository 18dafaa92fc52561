"""Calibration: the scale at which one eager call of the problem takes the target time (trusted code
only)."""
from __future__ import annotations

import time

from ..sizes import rewrite_constants, scale_value, size_constants
from .shared import _problem_namespace


def _numel(value) -> int:
    """Elements of every tensor in a (nested) model output."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.numel()
    if isinstance(value, (tuple, list)):
        return sum(_numel(v) for v in value)
    return 0


def _calibrate(job: dict) -> dict:
    """Auto scale: the largest 2**-k whose eager call takes <= target (trusted code only)."""
    import torch

    torch.set_num_threads(int(job["threads"]))
    torch.set_grad_enabled(False)
    source, target = job["problem"], float(job["target_s"])
    sizes = size_constants(source)
    max_elems = int(job.get("max_elements", 1 << 25))
    tried = []

    def attempt(k: int):
        scale = 2.0 ** -k
        ns = _problem_namespace(rewrite_constants(source, {n: scale_value(v, scale) for n, v in sizes.items()}))
        with torch.device("meta"):  # count elements without allocating anything
            torch.manual_seed(0)
            model = ns["Model"](*ns["get_init_inputs"]())
            inputs = list(ns["get_inputs"]())
            elems = sum(x.numel() for x in inputs if isinstance(x, torch.Tensor))
            elems += sum(p.numel() for p in model.parameters()) if hasattr(model, "parameters") else 0
            # the output too: a 32768 x 64 @ 64 x 32768 product has small inputs and a 4 GB result
            try:
                elems += _numel(model(*inputs))
            except Exception:  # noqa: BLE001 - an op without a meta kernel: inputs and parameters only
                pass
        if elems > max_elems:
            return {"k": k, "scale": scale, "elements": elems, "seconds": None, "why": "too large"}
        torch.manual_seed(0)
        model = ns["Model"](*ns["get_init_inputs"]())
        torch.manual_seed(1)
        x = list(ns["get_inputs"]())
        times = []
        for _ in range(4):
            t0 = time.process_time()
            model(*x)
            times.append(time.process_time() - t0)
            if times[-1] > 20 * target:
                break
        times = sorted(times[1:] or times)
        return {"k": k, "scale": scale, "elements": elems, "seconds": times[len(times) // 2]}

    best = None
    for k in range(0, 40):
        try:
            r = attempt(k)
        except Exception as e:  # noqa: BLE001 - too small for the problem (conv input < kernel...)
            tried.append({"k": k, "scale": 2.0 ** -k, "error": f"{type(e).__name__}: {e}"[:300]})
            break
        tried.append(r)
        if r["seconds"] is not None:
            best = r  # if still too slow: remembered in case the next step fails
            if r["seconds"] <= target:
                break
    return {"nonce": job["nonce"], "tried": tried, "choice": best}
