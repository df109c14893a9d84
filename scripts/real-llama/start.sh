#!/usr/bin/env bash
# Starts the llama-server that build.sh made on 127.0.0.1:PORT with its test model, waits until
# the model is loaded (llama-server answers 503 "Loading model" until then), and prints the base
# URL for an `openai`-type provider. The server runs on in the background, in a session of its
# own (a Ctrl-C meant for the caller does not reach it).
#
#   scripts/real-llama/start.sh PORT [llama-server args]     e.g. start.sh 8081 -c 2048
#   kill "$(cat /tmp/real-llama/llama-server.8081.pid)"      # stops it
#
# Its pid goes to $LLAMA_DIR/llama-server.PORT.pid and its log to $LLAMA_DIR/llama-server.PORT.log.
# The model answers to any model name (`--alias tiny` is what /v1/models lists). Environment:
# LLAMA_DIR (default /tmp/real-llama), THREADS (2), PARALLEL (2 slots: `-c 2048` gives each
# 1,024 tokens), READY_TIMEOUT_S (120), WATCH_PIDS (pids whose end ends the server: watchdog.sh).
set -euo pipefail

if [ $# -lt 1 ] || ! [[ "$1" =~ ^[0-9]+$ ]]; then
  echo "usage: $0 PORT [llama-server args]" >&2
  exit 2
fi
PORT="$1"
shift
DIR="${LLAMA_DIR:-/tmp/real-llama}"
SERVER="$DIR/llama.cpp/build/bin/llama-server"
MODEL="$DIR/models/random-smollm2-shape-f16.gguf"
HERE="$(cd "$(dirname "$0")" && pwd)"
PID_FILE="$DIR/llama-server.$PORT.pid"
LOG="$DIR/llama-server.$PORT.log"

if [ ! -x "$SERVER" ] || [ ! -f "$MODEL" ]; then
  echo "start.sh: no llama-server build in $DIR: run $HERE/build.sh first (LLAMA_DIR says where)" >&2
  exit 1
fi
health() { curl -fsS -m 2 "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; }
if health; then
  echo "start.sh: something already answers on 127.0.0.1:$PORT" >&2
  exit 1
fi

# --jinja: the model's own chat template (tools go through it), as llama-server is run for agents.
launch=("$SERVER" --host 127.0.0.1 --port "$PORT" -m "$MODEL" --alias tiny --jinja -t "${THREADS:-2}" -np "${PARALLEL:-2}" "$@")
if command -v setsid >/dev/null; then launch=(setsid "${launch[@]}"); fi
"${launch[@]}" </dev/null >"$LOG" 2>&1 &
pid=$!
echo "$pid" >"$PID_FILE"

# WATCH_PIDS="PID…": the server dies with those processes (a test runner killed, even by SIGKILL,
# leaves no server behind): a watchdog in a session of its own ends it once one of them is gone.
if [ -n "${WATCH_PIDS:-}" ]; then
  # shellcheck disable=SC2086 # the pids are words
  watch=("$HERE/watchdog.sh" "$pid" $WATCH_PIDS)
  if command -v setsid >/dev/null; then watch=(setsid "${watch[@]}"); fi
  "${watch[@]}" </dev/null >/dev/null 2>&1 &
  echo "$!" >"$DIR/llama-server.$PORT.watchdog.pid"
fi

deadline=$(($(date +%s) + ${READY_TIMEOUT_S:-120}))
until health; do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "start.sh: llama-server exited before it was ready; the end of $LOG:" >&2
    tail -20 "$LOG" >&2
    exit 1
  fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "start.sh: llama-server not ready after ${READY_TIMEOUT_S:-120} s (log: $LOG); stopped it" >&2
    kill "$pid"
    exit 1
  fi
  sleep 0.3
done
echo "start.sh: llama-server (pid $pid) ready on port $PORT; log $LOG" >&2
echo "http://127.0.0.1:$PORT/v1"
