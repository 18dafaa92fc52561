"""Every Triton oracle (kernelenv/oracles/triton/level1) computes its KernelBench problem's reference,
checked on CPU with Triton's interpreter (TRITON_INTERPRET=1; a GPU run times them:
benchmarks/kernel_gpu_bench.py)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KB = ROOT.parent / "shared" / "external" / "kernelbench" / "level1"
ORACLES = sorted((ROOT / "kernelenv" / "oracles" / "triton" / "level1").glob("*.py"))

CHECK = r"""
import importlib.util, json, sys, torch
def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m
out = {}
for ref_path, oracle_path in json.loads(sys.argv[1]):
    ref, new = load(ref_path, "ref"), load(oracle_path, "new")
    torch.manual_seed(0)
    x = torch.rand(3, 5000) * 8 - 4  # small rows, negative values too (the published inputs are rand in [0, 1))
    a, b = ref.Model(*ref.get_init_inputs())(x), new.ModelNew(*ref.get_init_inputs())(x)
    out[oracle_path] = float((a - b).abs().max())
print(json.dumps(out))
"""


def test_triton_oracles_match_their_references():
    if not KB.is_dir():
        pytest.skip(f"no KernelBench checkout at {KB}")
    pytest.importorskip("triton")
    pairs = [[str(KB / p.name), str(p)] for p in ORACLES]
    assert len(pairs) >= 9
    p = subprocess.run([sys.executable, "-c", CHECK, json.dumps(pairs)], capture_output=True, text=True, timeout=600,
                       env={**os.environ, "TRITON_INTERPRET": "1"})
    assert p.returncode == 0, p.stderr[-3000:]
    errors = json.loads(p.stdout.strip().splitlines()[-1])
    assert set(errors) == {str(o) for o in ORACLES}
    assert all(e < 1e-4 for e in errors.values()), errors
