#!/usr/bin/env bash
# The confirmatory seeds of docs/alignment.md ("The confirmatory seeds 1-8"), one session's share on a
# machine that may not outlive the session. From the repository root, after scripts/setup.sh:
#
#   bash experiments/confirmatory.sh SEED [SEED...]
#
# Two processes, one torch thread each (one per core): A trains SFT then RLPF (one real-model RLPF per
# machine), B DPA then RFT; each evaluates the models it trained, SFT's by whichever process reaches it
# first (the other defers it); a last pass per seed writes its result.json once every unit is done. The
# records (metrics, weights' digests, every evaluation's samples; no weights) are saved after every
# finished unit in RECORDS, a folder of the repository to commit before the session ends (after
# `alignment_proof.py ... --save-records`, which copies what finished since the last save): the next
# machine restores them, rebuilds the task from its recorded measurements and trains again only what a
# unit still needs (SFT, with the weights' digest compared to the first training's).
# Env: WORKDIR (default /work/runs/confirmatory), RECORDS (default docs/measurements/confirmatory-qwen05b),
# PY (default .venv/bin/python), NICE (default 10). Logs: WORKDIR/run-A.log, run-B.log.
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: bash experiments/confirmatory.sh SEED [SEED...]" >&2; exit 2; }
W="${WORKDIR:-/work/runs/confirmatory}"
R="${RECORDS:-$PWD/docs/measurements/confirmatory-qwen05b}"
PY="${PY:-.venv/bin/python}"
mkdir -p "$W" "$R"
run() {  # ARMS... for SEED (global), one process
  HF_HUB_OFFLINE=1 nice -n "${NICE:-10}" "$PY" experiments/alignment_proof.py --profile qwen-0.5b \
    --families idioms --gate docs/measurements/pilot-qwen05b-2026-11-29/gate.json \
    --workdir "$W" --records "$R" --seeds "$SEED" --arms "$@"
}
chain() {  # NAME ARM... : per seed, one process per arm, then the seed's last pass
  local name=$1; shift
  for SEED in "${SEEDS[@]}"; do
    for arm in "$@"; do
      echo "== $(date -u +%FT%TZ) seed $SEED --arms $arm"; run "$arm"
      # the weights (and checkpoints) of the seed's models already trained and evaluated go, SFT's
      # last: ~10 GB a seed, and this host's disk filled at the fifth (2026-11-30)
      run dpa rft rlpf --prune-weights
    done
  done
  for SEED in "${SEEDS[@]}"; do
    echo "== $(date -u +%FT%TZ) seed $SEED, the last pass"; run dpa rft rlpf; run dpa rft rlpf --prune-weights
  done
}
SEEDS=("$@")
# the task first, once (both chains read it)
SEED=${SEEDS[0]} run dpa rft rlpf --plan-only >> "$W/run-plan.log" 2>&1 || { tail -5 "$W/run-plan.log"; exit 1; }
chain A rlpf >> "$W/run-A.log" 2>&1 &
sleep 30
chain B dpa rft >> "$W/run-B.log" 2>&1 &
wait
