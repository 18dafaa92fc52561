#!/usr/bin/env bash
# Screenshots of the Prefect UI after a small run: the flow runs page (runs named <run>/<stage>)
# and the artifacts page (a table per stage, the evaluation report as markdown).
#
#   bash scripts/ui_screenshot.sh [WORKDIR]        (default: /tmp/perfalign-ui-shot)
#   FULL=1 bash scripts/ui_screenshot.sh            the whole `perfalign pipeline` instead of the small run
#
# Needs chromium (`apt-get install -y chromium`). Writes WORKDIR/runs.png, WORKDIR/artifacts.png, the
# artifact pages WORKDIR/artifact-perf-table.png and WORKDIR/artifact-report.png,
# WORKDIR/flow-run.png and the run itself under WORKDIR/runs/demo.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${1:-/tmp/perfalign-ui-shot}"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
CHROMIUM="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
[ -n "$CHROMIUM" ] || { echo "error: chromium not found (apt-get install -y chromium)" >&2; exit 2; }
PORT="${PORT:-$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}"
rm -rf "$WORK" && mkdir -p "$WORK"
export PERFALIGN_HOME="$WORK/home" PREFECT_API_URL="http://127.0.0.1:$PORT/api" COLUMNS=120
perfalign() { "$PY" -m perfalign.cli "$@"; }

"$PY" -m perfalign.cli ui --port "$PORT" > "$WORK/ui.log" 2>&1 &  # not the shell function: $! is python
UI=$!
trap 'kill -TERM $UI 2>/dev/null; wait $UI 2>/dev/null || true' EXIT  # `perfalign ui` stops its server on SIGTERM
for _ in $(seq 1 300); do
  curl -sf "$PREFECT_API_URL/health" > /dev/null && break
  kill -0 $UI 2>/dev/null || { cat "$WORK/ui.log" >&2; exit 1; }
  sleep 1
done

RUN="$WORK/runs/demo"
if [ "${FULL:-0}" = 1 ]; then
  # on the terminal as it is (a TTY shows the live bars: run it in tmux to capture them)
  perfalign pipeline --out "$RUN"
else  # the stages that need no training, each its own flow run named demo/<stage>
  perfalign perf build --out "$RUN/codecontests_perf" --limit-problems 2 --repeats 1 --max-tests 2 2>&1 | tee "$WORK/run.log"
  perfalign synth generate --out "$RUN/synthetic" --llm-backend sample --n 4 2>&1 | tee -a "$WORK/run.log"
  perfalign triplets build --out "$RUN/triplets" --codecontests "$RUN/codecontests_perf" \
    --synthetic "$RUN/synthetic" 2>&1 | tee -a "$WORK/run.log"
  perfalign eval --out "$RUN/evaluate" --models reference=oracle:reference --models slow=oracle:slow \
    --tasks polybench --num-samples 1 --max-prompts-per-task 2 2>&1 | tee -a "$WORK/run.log"
fi

shot() {  # URL PNG
  "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --hide-scrollbars --screenshot="$2" \
    --window-size=1500,1000 --virtual-time-budget=30000 "$1" > /dev/null 2>&1
  echo "screenshot: $2"
}
UI_URL="http://127.0.0.1:$PORT"
shot "$UI_URL/runs" "$WORK/runs.png"
shot "$UI_URL/artifacts" "$WORK/artifacts.png"
RUN_ID="$(curl -sf -X POST "$PREFECT_API_URL/flow_runs/filter" -H 'Content-Type: application/json' \
  -d '{"sort": "START_TIME_DESC", "limit": 1}' | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')"
shot "$UI_URL/runs/flow-run/$RUN_ID?tab=Artifacts" "$WORK/flow-run.png"
artifact_id() {  # KEY -> the id of its latest version (the page that shows its content)
  curl -sf -X POST "$PREFECT_API_URL/artifacts/filter" -H 'Content-Type: application/json' \
    -d "{\"artifacts\": {\"key\": {\"any_\": [\"$1\"]}}, \"sort\": \"CREATED_DESC\", \"limit\": 1}" \
    | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])'
}
shot "$UI_URL/artifacts/artifact/$(artifact_id demo-codecontests-perf)" "$WORK/artifact-perf-table.png"
shot "$UI_URL/artifacts/artifact/$(artifact_id demo-evaluation-report)" "$WORK/artifact-report.png"
