"""Code shipped into the sandbox (``sandbox/shipping.py``): a package as one file whose modules are
never looked up on a path, so a program that drops a module of the same name in its working
directory or on the path cannot have it imported in place of a shipped one."""
from __future__ import annotations

import ast
import json
import marshal
import subprocess
import sys
from pathlib import Path

import pytest

from perfalign.kernelenv.score import GUEST
from perfalign.sandbox import Limits, TestCase, Verdict
from perfalign.sandbox.backends.base import RUNNER_PACKAGE
from perfalign.sandbox.shipping import bundle

BUNDLES = {"runner": (RUNNER_PACKAGE,), "kernel_guest": GUEST}
# a shadow module: if anything imports it, the mark says so and the process ends
SHADOW = "import os\nopen(os.environ['SHADOW_MARK'], 'a').write(__name__ + '\\n')\nraise SystemExit(97)\n"


def _shipped(text: str) -> list[str]:
    """The module names a bundle holds, in its load order."""
    node = next(n for n in ast.parse(text).body if isinstance(n, ast.Assign) and n.targets[0].id == "_SHIPPED")
    return [name for name, _, _ in ast.literal_eval(node.value)]


def _plant(root: Path, names: list[str]) -> None:
    """A shadow of every shipped module under ``root``, at its dotted path (a package, so that the
    module ``evil`` the bundle does not hold sits beside its children) and under its last name."""
    for name in names:
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            package = root.joinpath(*parts[:i])
            package.mkdir(parents=True, exist_ok=True)
            for leaf in ("__init__.py", "evil.py"):
                (package / leaf).write_text(SHADOW)
        (root / f"{parts[-1]}.py").write_text(SHADOW)


def _hostile(tmp_path: Path, text: str) -> tuple[Path, Path, dict]:
    """The bundle as a file, a folder full of shadows, and an environment with that folder first on
    the path (cwd is the folder too)."""
    prog = tmp_path / "prog" / "main.py"
    prog.parent.mkdir()
    prog.write_text(text)
    box = tmp_path / "box"
    _plant(box, _shipped(text))
    mark = tmp_path / "mark"
    return prog, box, {"PYTHONPATH": str(box), "SHADOW_MARK": str(mark), "PATH": "/usr/bin:/bin"}


@pytest.mark.parametrize("which", sorted(BUNDLES))
def test_a_module_planted_on_the_path_is_never_imported_in_place_of_a_shipped_one(tmp_path, which):
    text = bundle(*BUNDLES[which])
    names = _shipped(text)
    prog, box, env = _hostile(tmp_path, text)
    mark = Path(env["SHADOW_MARK"])
    # the shadows are live: an ordinary import in that environment takes them
    plain = subprocess.run([sys.executable, "-S", "-c", f"import {names[-1]}"], cwd=box, env=env, timeout=60)
    assert plain.returncode == 97 and mark.read_text(), plain
    mark.unlink()
    # the bundle's loader (without main) in the same environment: every shipped module is its own
    probe = ("import importlib, sys\n"
             "exec(compile(open(sys.argv[1]).read(), sys.argv[1], 'exec'), {'__name__': 'probe'})\n"
             "names = sys.argv[2:]\n"
             "got = [importlib.import_module(n) for n in names]\n"
             "assert all(m is sys.modules[n] and not hasattr(m, '__file__') for m, n in zip(got, names))\n"
             "for n in {'.'.join(n.split('.')[:i]) for n in names for i in range(1, n.count('.') + 1)}:\n"
             "    try:\n"
             "        importlib.import_module(n + '.evil')\n"
             "        sys.exit('imported ' + n + '.evil')\n"
             "    except ModuleNotFoundError:\n"
             "        pass\n"
             "print('shipped', len(names))\n")
    p = subprocess.run([sys.executable, "-S", "-c", probe, str(prog), *names], cwd=box, env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.split() == ["shipped", str(len(names))], (p.stdout, p.stderr[-2000:])
    assert not mark.exists(), mark.read_text()


def test_a_shipped_module_that_imports_one_not_shipped_is_refused_on_the_host():
    """It would fail in the box, after the job started: the host says which import, before."""
    with pytest.raises(ValueError, match=r"imports perfalign\.kernelenv\.sizes, which is not shipped"):
        bundle(GUEST[0], *(m for m in GUEST[1:] if not m.endswith(".sizes")))


def test_the_runner_run_among_shadows_runs_its_own_code(tmp_path):
    """The runner as a script (no -I: the shadows' folder on PYTHONPATH and as cwd) runs a program
    and reports it; no shadow is imported."""
    prog, box, env = _hostile(tmp_path, bundle(RUNNER_PACKAGE))
    job = {"argv": ["/bin/echo", "hi"], "tests": [None], "repeats": 2, "limits": {"wall_s": 10, "cpu_s": 5},
           "hard_limits": True, "output_dir": str(tmp_path), "max_output_bytes": 1000, "cwd": str(box)}
    spec = tmp_path / "job.marshal"
    spec.write_bytes(marshal.dumps(job))
    p = subprocess.run([sys.executable, "-S", str(prog), str(spec)], cwd=box, env=env, capture_output=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    assert not Path(env["SHADOW_MARK"]).exists()
    heads = [json.loads(line) for line in p.stdout.splitlines() if line.startswith(b"{")]
    assert heads[-1] == {"done": True} and [h["exit_code"] for h in heads[:-1]] == [0, 0], heads


PLANT_IN_THE_BOX = """
import os, subprocess
SHADOW = "raise SystemExit(97)\\n"
names = %r
# where the runner imports from (the system interpreter, isolated, as the backends start it)
path = subprocess.run(["/usr/bin/python3", "-I", "-S", "-c", "import sys; print(*sys.path)"],
                      capture_output=True, text=True).stdout.split()
writable = []
for d in [*path, "/run", "/run/perfalign", "/box/prog"]:
    try:
        with open(os.path.join(d, "_blake2.py"), "w") as f:
            f.write(SHADOW)
        writable.append(d)
    except OSError:
        pass
planted = 0
for d in {os.getcwd(), "/tmp", "/dev/shm", os.environ.get("HOME", "/tmp")}:
    for name in names + ["_blake2", "socket"]:
        parts = name.split(".")
        try:
            os.makedirs(os.path.join(d, *parts[:-1]), exist_ok=True)
            for i in range(1, len(parts)):
                open(os.path.join(d, *parts[:i], "__init__.py"), "w").write(SHADOW)
            open(os.path.join(d, *parts) + ".py", "w").write(SHADOW)
            open(os.path.join(d, parts[-1] + ".py"), "w").write(SHADOW)
            planted += 1
        except OSError:
            pass
print("writable", *writable, "planted", planted > 0)
"""


def test_a_program_in_the_box_cannot_write_where_the_runner_imports_from(sandbox):
    """In the real box: the runner's path and its one file are read-only to the program; what it
    plants where it can write (its cwd, /tmp, /dev/shm, $HOME) leaves the next repeat, which the
    runner starts after importing more of the standard library, unaffected."""
    names = _shipped(bundle(RUNNER_PACKAGE))
    r = sandbox.run(PLANT_IN_THE_BOX % names, "python3", [TestCase("", "writable planted True")],
                    Limits(time_s=10, memory_mb=256, output_mb=4), repeats=2, keep_output=True)
    assert r.verdict is Verdict.OK, (r.verdict, r.message, r.tests[0].output if r.tests else None)
    assert len(r.tests[0].cpu_times_s) == 2  # both repeats ran: the runner outlived the plants
