#!/usr/bin/env bash
# Ends a llama-server when the process that started it is gone: start.sh runs it, in a session of
# its own, when WATCH_PIDS is set (the test helper sets its test runner's pids). Every second it
# looks at the watched pids; once one is gone (or a zombie nobody reaps), it sends the server
# SIGTERM, then SIGKILL after 10 s. It exits by itself when the server does. No signal of the
# watched process is needed: a SIGKILL of the runner leaves no server behind either.
#
#   scripts/real-llama/watchdog.sh SERVER_PID WATCHED_PID...
set -uo pipefail

server="$1"
shift

# Alive: it exists and is not a zombie (/proc says which; without /proc, signal 0 alone).
alive() {
  kill -0 "$1" 2>/dev/null || return 1
  [ -r "/proc/$1/stat" ] || return 0
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"
  [ "${stat%% *}" != Z ]
}

while alive "$server"; do
  for watched in "$@"; do
    if ! alive "$watched"; then
      kill -TERM "$server" 2>/dev/null
      for _ in $(seq 1 100); do
        alive "$server" || exit 0
        sleep 0.1
      done
      kill -KILL "$server" 2>/dev/null
      exit 0
    fi
  done
  sleep 1
done
