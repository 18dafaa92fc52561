"""The judges' language environments beyond the host toolchains, installed by scripts/setup.sh.

- Python 3 library set (AtCoder's 2023 CPython set, see scripts/judge-python3.txt), installed
  with pip ``--target`` into ``ENV_DIR/py3libs`` for /usr/bin/python3. Mounted read-only and put
  on the *program's* PYTHONPATH only (the runner runs ``python3 -I`` and never sees it).
- Python 2 (CodeContests language 1): a Debian bullseye root (``debootstrap --variant=minbase``
  + ``python2.7``) at ``ENV_DIR/py2root``, mounted read-only. The program runs through the
  root's own dynamic loader with ``--library-path`` on the root's libraries, so the host's
  /usr (and the runner) stay as they are and nothing of the root is executed outside it.

Both are complete only when setup.sh has written their stamp file last: a half-built
directory is reported missing, never half used.
"""
from __future__ import annotations

import functools
import json
import os
import re
import subprocess
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from .backends.base import Mount
from .types import Language

ENV_DIR = Path(os.environ.get("PERFALIGN_ENV_DIR", "/opt/perfalign"))
STAMP = ".perfalign-ready"
PY3_GUEST = "/opt/perfalign/py3libs"
PY2_GUEST = "/opt/perfalign/py2"
SETUP_HINT = "run `bash scripts/setup.sh` (as root, or with sudo)"
# Contest judges give a program one core: multi-threaded BLAS/OpenMP pools would only add
# spinning CPU time to the measurement. A job's own env can still override these.
_PY3_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
            "NUMBA_NUM_THREADS": "1", "NUMBA_CACHE_DIR": "/tmp/numba-cache"}


def _read_stamp(directory: Path) -> dict | None:
    try:
        return json.loads((directory / STAMP).read_text())
    except (OSError, ValueError):
        return None


@dataclass(frozen=True)
class Python3Libs:
    dir: Path | None
    python: str = ""             # major.minor of the interpreter the wheels were installed for
    libraries: tuple[tuple[str, str], ...] = ()
    reason: str = ""             # why dir is None


@functools.lru_cache(maxsize=None)
def _python3_version() -> str:
    """major.minor of the sandbox's /usr/bin/python3 (the one the programs run under)."""
    try:
        p = subprocess.run(["/usr/bin/python3", "-I", "-S", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                           capture_output=True, text=True, timeout=30)
        return p.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


@functools.lru_cache(maxsize=None)
def python3_libs() -> Python3Libs:
    d = ENV_DIR / "py3libs"
    stamp = _read_stamp(d)
    if stamp is None:
        return Python3Libs(None, reason=f"judge Python 3 libraries not installed at {d}: {SETUP_HINT}")
    want = _python3_version()
    if stamp.get("python") != want:
        return Python3Libs(None, reason=f"judge Python 3 libraries at {d} were installed for Python "
                                        f"{stamp.get('python')}, the sandbox runs {want or 'no python3'}: {SETUP_HINT}")
    # names normalized as pip does (PEP 503): typing_extensions -> typing-extensions
    libs = sorted({(re.sub(r"[-_.]+", "-", dist.metadata["Name"]).lower(), dist.version)
                   for dist in metadata.distributions(path=[str(d)])})
    return Python3Libs(d, want, tuple(libs))


@dataclass(frozen=True)
class Python2Root:
    root: Path | None
    loader: str = ""        # guest paths, inside PY2_GUEST
    library_path: str = ""
    python: str = ""
    version: str = ""
    reason: str = ""


def resolve_in_root(root: Path, path: str) -> str:
    """``path`` with every symlink followed as if ``root`` were ``/`` (the bullseye root's
    links are absolute: resolving them on the host would land in the host's /lib)."""
    parts = [p for p in path.split("/") if p]
    done: list[str] = []
    hops = 0
    while parts:
        part = parts.pop(0)
        if part == "..":
            done = done[:-1]
            continue
        if part == ".":
            continue
        host = root.joinpath(*done, part)
        if host.is_symlink():
            hops += 1
            if hops > 40:
                raise OSError(f"too many symlinks resolving {path} in {root}")
            target = os.readlink(host)
            if target.startswith("/"):
                done = []
            parts = [p for p in target.split("/") if p] + parts
        else:
            done.append(part)
    return "/" + "/".join(done)


@functools.lru_cache(maxsize=None)
def python2() -> Python2Root:
    """Detect the Python 2 root and check that its interpreter starts (a trusted one-liner)."""
    root = ENV_DIR / "py2root"
    missing = (f"Python 2 (CodeContests language 1) needs the Debian bullseye root at {root}, which is "
               f"missing or incomplete: {SETUP_HINT} (it runs debootstrap --variant=minbase bullseye "
               f"and installs python2.7, ~1 min), or point PERFALIGN_ENV_DIR at a folder holding py2root/")
    if _read_stamp(root) is None:
        return Python2Root(None, reason=missing)
    try:
        loader = resolve_in_root(root, "/lib64/ld-linux-x86-64.so.2")
        python = resolve_in_root(root, "/usr/bin/python2.7")
        libdirs = [resolve_in_root(root, d) for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu")]
    except OSError as e:
        return Python2Root(None, reason=f"{missing} ({e})")
    if not (root / loader.lstrip("/")).is_file() or not (root / python.lstrip("/")).is_file():
        return Python2Root(None, reason=missing)
    libpath = ":".join(dict.fromkeys(libdirs))
    # Probe on the host through the same loader, with host paths.
    host = lambda p: str(root) + p  # noqa: E731
    argv = [host(loader), "--library-path", ":".join(host(d) for d in libpath.split(":")), host(python),
            "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"]
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=30, env={"PYTHONHOME": host("/usr")})
    except (OSError, subprocess.SubprocessError) as e:
        return Python2Root(None, reason=f"the Python 2 root at {root} does not start: {e}")
    if p.returncode != 0 or not p.stdout.startswith("2."):
        return Python2Root(None, reason=f"the Python 2 root at {root} does not start: {p.stderr.strip()[-300:]}")
    guest = lambda p: PY2_GUEST + p  # noqa: E731
    return Python2Root(root, guest(loader), ":".join(guest(d) for d in libpath.split(":")), guest(python),
                       p.stdout.strip())


def python2_argv(script: str) -> tuple[str, ...]:
    """argv (guest paths) running ``script`` under the bullseye Python 2."""
    py2 = python2()
    if py2.root is None:
        raise RuntimeError(py2.reason)
    return (py2.loader, "--library-path", py2.library_path, py2.python, "-B", script)


def program_setup(language: Language, toolchain: str = "default") -> tuple[list[Mount], dict[str, str]]:
    """The read-only mounts the language's programs need, and the environment of the program (not
    the runner): where its libraries are."""
    if language is Language.PYTHON3 and toolchain == TORCH_TOOLCHAIN:
        site = torch_site()
        # One thread unless the job says otherwise; caches (Inductor, Triton) in the run's own /tmp;
        # USER because getpass (used by Inductor) fails for a uid without a passwd entry.
        return ([Mount(TORCH_GUEST, site.dir)] if site.dir is not None else [],
                {"PYTHONPATH": TORCH_GUEST, **_PY3_ENV, "TORCHINDUCTOR_CACHE_DIR": "/tmp/torchinductor",
                 "TRITON_CACHE_DIR": "/tmp/triton", "USER": "sandbox"})
    if language is Language.PYTHON3 and python3_libs().dir is not None:
        return [Mount(PY3_GUEST, python3_libs().dir)], {"PYTHONPATH": PY3_GUEST, **_PY3_ENV}
    if language is Language.PYTHON2 and python2().root is not None:
        return [Mount(PY2_GUEST, python2().root)], {"PYTHONHOME": PY2_GUEST + "/usr"}
    return [], {}


# ---------------------------------------------------------------------------- Python 3 with torch
# Job(language="python3", toolchain="torch"): /usr/bin/python3 with the site-packages that hold
# torch (the host's, e.g. the repo's .venv) mounted read-only on the program's PYTHONPATH. Any
# CPython of the same major.minor can load those wheels, so no second interpreter is mounted.
# Used by the kernel environment (kernelenv/) to run KernelBench problems and candidates.
TORCH_TOOLCHAIN = "torch"
TORCH_GUEST = "/opt/perfalign/torch-site"


@dataclass(frozen=True)
class TorchSite:
    dir: Path | None
    version: str = ""
    reason: str = ""


@functools.lru_cache(maxsize=None)
def torch_site() -> TorchSite:
    """The site-packages directory holding torch, if the sandbox's python3 can use it.

    ``PERFALIGN_TORCH_SITE`` overrides the host's own torch installation.
    """
    import importlib.util
    import sys

    env = os.environ.get("PERFALIGN_TORCH_SITE")
    if env:
        site = Path(env)
        host_python = _python3_version()  # an explicit site is trusted to match the sandbox's python
    else:
        spec = importlib.util.find_spec("torch")
        if spec is None or not spec.origin:
            return TorchSite(None, reason="torch is not installed in this Python environment "
                                          "(pip install torch==2.13.0, or set PERFALIGN_TORCH_SITE)")
        site = Path(spec.origin).resolve().parent.parent
        host_python = "%d.%d" % sys.version_info[:2]
    if host_python != _python3_version():
        return TorchSite(None, reason=f"torch at {site} is built for Python {host_python}, the sandbox runs "
                                      f"{_python3_version() or 'no python3'}: set PERFALIGN_TORCH_SITE")
    for d in (site, *site.parents):  # the sandbox's unprivileged uid must reach it
        if not os.stat(d).st_mode & 0o001:
            return TorchSite(None, reason=f"{site} is not reachable by the sandbox's unprivileged uid "
                                          f"({d} is not world-traversable): set PERFALIGN_TORCH_SITE")
    versions = [dist.version for dist in metadata.distributions(path=[str(site)]) if dist.metadata["Name"] == "torch"]
    return TorchSite(site, versions[0] if versions else "unknown")
