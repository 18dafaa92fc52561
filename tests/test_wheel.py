"""The wheel is the product: built from the files git knows (a fresh clone, nothing ignored or
stale from an earlier build), installed into a new venv outside the checkout, it must carry its
bundled samples and the pipeline config, and `perfalign config` and a small `perfalign perf
build` must work from an empty folder with nothing of the checkout importable.

The new venv gets the project venv's third-party packages through a .pth line (installing torch
and the rest again would take many minutes); perfalign itself comes only from the wheel."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(cmd: list[str], cwd: Path, env: dict | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"{' '.join(map(str, cmd))} exited {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p


def _isolation() -> list[str]:
    """``--no-build-isolation`` when this venv has setuptools >= 77 (pyproject's build-system)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        major = int(version("setuptools").split(".")[0])
    except (PackageNotFoundError, ValueError):
        return []
    return ["--no-build-isolation"] if major >= 77 else []


def _console_scripts(bindir: Path, py: Path) -> None:
    """What pip writes for each installed distribution's console_scripts, for the borrowed ones."""
    from importlib.metadata import distributions

    for dist in distributions():
        if (dist.metadata["Name"] or "").lower() == "perfalign":
            continue
        for ep in dist.entry_points:
            script = bindir / ep.name
            if ep.group != "console_scripts" or script.exists():
                continue
            script.write_text(f"#!{py}\nimport importlib, sys\nobj = importlib.import_module({ep.module!r})\n"
                              f"for part in {ep.attr!r}.split('.'):\n    obj = getattr(obj, part)\nsys.exit(obj())\n")
            script.chmod(0o755)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    t0 = time.monotonic()
    base = tmp_path_factory.mktemp("wheel")
    src = base / "clone"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        if (ROOT / rel).is_file():  # a tracked file another change deleted is not there
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, src / rel)
    # without build isolation where this venv has the build backend (fast, no package index needed)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", *_isolation(), "-q", "-w", str(base / "dist"), str(src)],
         cwd=base)
    wheel = next((base / "dist").glob("perfalign-*.whl"))
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=base)
    py = venv / "bin" / "python"
    purelib = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], cwd=base).stdout
    site = Path(purelib.strip()).resolve()
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "--no-index", "-q", str(wheel)],
         cwd=base)
    # third-party packages from the project venv, after the new venv's own site-packages, and
    # their console scripts (`perfalign ui` runs `prefect server start` from the venv's bin/)
    (site / "_project_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    _console_scripts(venv / "bin", py)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PREFECT_", "PERFALIGN_HOME"))}
    env["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] = "600"  # a loaded CI machine starts it slowly
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    work = base / "work"
    work.mkdir()
    return {"wheel": wheel, "venv": venv, "py": py, "site": site, "env": env, "work": work,
            "setup_s": time.monotonic() - t0}


def test_wheel_carries_the_package_data_and_only_the_package(installed):
    names = zipfile.ZipFile(installed["wheel"]).namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"perfalign", "perfalign-0.1.0.dist-info"}, tops
    for required in ("perfalign/config/profiles/embedded.toml", "perfalign/config/profiles/production.toml",
                     "perfalign/alignment/accelerate_fsdp.yaml",
                     "perfalign/data/codecontests_sample/data/train-00000-of-00001.parquet",
                     "perfalign/data/stack_seeds/cpp", "perfalign/data/synth_sample/pairs",
                     "perfalign/data/pareval_sample", "perfalign/data/polybench_sample",
                     "perfalign/sandbox/docker/Dockerfile", "perfalign/sandbox/perfcount.c",
                     "perfalign/sandbox/shipping.py", "perfalign/sandbox/runner/main.py",
                     "perfalign/kernelenv/guest/main.py", "perfalign/kernelenv/guest/driver.py",
                     "perfalign-0.1.0.dist-info/licenses/LICENSE"):
        assert any(n == required or n.startswith(required + "/") for n in names), required
    assert not any(n.startswith(("perfalign/tests/", "perfalign/benchmarks/", "perfalign/experiments/",
                                 "perfalign/build/")) for n in names)
    meta = zipfile.ZipFile(installed["wheel"]).read("perfalign-0.1.0.dist-info/METADATA").decode()
    assert "License-Expression: Apache-2.0" in meta and "License-File: LICENSE" in meta
    # what the wheel put into the new venv: the package and its metadata, nothing else of ours
    assert sorted(os.listdir(installed["site"])) == ["_project_deps.pth", "perfalign", "perfalign-0.1.0.dist-info"]


def test_installed_wheel_runs_config_and_a_small_build_outside_the_checkout(installed):
    py, env, work, site = installed["py"], installed["env"], installed["work"], installed["site"]
    t0 = time.monotonic()
    where = _run([str(py), "-I", "-c", "import perfalign, perfalign.config.tables as c, perfalign.common.paths as p; "
                  "print(perfalign.__file__); print(c.__file__); print(p.BUNDLED_DATA)"], cwd=work, env=env)
    files = [Path(x) for x in where.stdout.split()]
    assert all(f.is_relative_to(site / "perfalign") for f in files), files
    assert files[2].is_dir()

    exe = str(installed["venv"] / "bin" / "perfalign")
    cfg = json.loads(_run([exe, "config", "--profile", "embedded", "--json"], cwd=work, env=env).stdout)
    source = Path(cfg["settings"]["perf"]["source"]["value"])
    assert source.is_relative_to(site / "perfalign" / "data") and source.is_dir()

    out = work / "ccperf"
    build = _run([exe, "perf", "build", "--profile", "embedded", "--out", str(out), "--limit-problems", "1",
                  "--max-tests", "2", "--repeats", "1", "--json"], cwd=work, env=env, timeout=600)
    summary = json.loads(build.stdout.strip().splitlines()[-1])
    assert summary["problems"] == 1 and summary["status"].get("measured", 0) >= 1, summary
    assert (out / "README.md").is_file() and list((out / "submissions").glob("*.parquet"))
    print(f"wheel: {installed['wheel'].stat().st_size / 1e6:.2f} MB; setup {installed['setup_s']:.0f} s, "
          f"config + build {time.monotonic() - t0:.0f} s")
