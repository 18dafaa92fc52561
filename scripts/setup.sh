#!/usr/bin/env bash
# Installs everything perfalign needs on a fresh Debian/Ubuntu machine:
# system packages (compilers, JDK, bubblewrap), a virtualenv at .venv, Python deps.
# Idempotent: re-running only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# System packages: g++ for C++, a JDK 17 for Java, bubblewrap for the sandbox,
# setpriv (util-linux) to drop to an unprivileged uid, python3-venv for .venv.
PKGS="g++ openjdk-17-jdk-headless bubblewrap util-linux python3 python3-venv python3-dev"
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
.venv/bin/python -m pip install -q -e ".[dev]"
echo "[setup] done: $(.venv/bin/python --version), perfalign at .venv/bin/perfalign"
