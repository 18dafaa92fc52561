#!/usr/bin/env bash
# The GPU measurements owed by the CPU-only runs, as one script for a lent GPU machine (one H100/H200,
# its own python3 with torch/transformers/peft/triton; nothing fetched there). Writes JSON and logs
# to $OUT (default ./runs/gpu). KernelBench level 1 is read from $KB (a user's checkout).
#   OUT=runs/gpu KB=../shared/external/kernelbench/level1 bash benchmarks/gpu_session.sh
set -u
OUT="${OUT:-runs/gpu}"; KB="${KB:-../shared/external/kernelbench/level1}"; PY="${PY:-python3}"
mkdir -p "$OUT"; export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/scale.log"
S="benchmarks/scale_training.py --scale deepseek-6.7b --device cuda --bf16 --gradient-checkpointing"
run() { local name=$1 limit=$2; shift 2; echo "== $name: $*" | tee -a "$OUT/scale.log"
  timeout "$limit" $PY $S "$@" --json "$OUT/scale_$name.json" 2>&1 | grep -vE "Warning|warn\(" | tail -12 | tee -a "$OUT/scale.log"; }
run full 100 --stages sft,reward,dpa --steps 3
run lora 130 --lora 16 --stages sft,reward,dpa,rlpf --steps 2 --rl-response-len 256
echo "== kernels" | tee "$OUT/kernel.log"
timeout 160 $PY benchmarks/kernel_gpu_bench.py --kernelbench "$KB" --deadline 110 --json "$OUT/kernel_gpu.json" 2>&1 \
  | grep -vE "Warning|warn\(" | tee -a "$OUT/kernel.log" | tail -15
run 8bit 60 --optim adamw8bit --stages sft --steps 3
run fsdp_offload 100 --fsdp cpu-offload --stages sft --steps 2
echo "done"
