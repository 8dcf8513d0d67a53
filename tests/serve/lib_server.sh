# Sourced by the serve tests: start_server ARGS... starts `rocmforge serve` on a free loopback
# port (--port 0, the port read from its log) and sets URL; every server started is killed at
# exit, so no test leaves one running. stop_server NAME sends SIGTERM and returns its exit code.
tmp=$(mktemp -d)
declare -A server_pid
cleanup() {
  for p in "${server_pid[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
# check DESCRIPTION CONDITION...: runs the condition (a command), ok or FAIL.
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }

# need_openai_npm NPM_DIR: the official `openai` npm package in NPM_DIR (installed there once);
# the test is skipped (77) without node/npm or a reachable registry.
need_openai_npm() {
  local dir=$1
  command -v node >/dev/null && command -v npm >/dev/null || { echo "SKIP: node/npm not installed"; exit 77; }
  [ -f "$dir/node_modules/openai/package.json" ] && return 0
  mkdir -p "$dir"
  if ! timeout 120 npm install --prefix "$dir" --no-audit --no-fund --silent openai@4 >"$dir/install.log" 2>&1; then
    echo "SKIP: npm install openai failed (registry unreachable?):"; tail -n 3 "$dir/install.log"; exit 77
  fi
}

# start_server NAME ARGS...: sets URL (and URL_<NAME> is not needed: one URL at a time). The
# script's serve_extra array, if set, is appended to every server's arguments.
start_server() {
  local name=$1; shift
  "$rocmforge" serve -m "$model" --port 0 "$@" ${serve_extra[@]+"${serve_extra[@]}"} >"$tmp/$name.log" 2>&1 &
  server_pid[$name]=$!
  for _ in $(seq 100); do
    local port
    port=$(grep -o 'listening on http://[0-9.]*:[0-9]*' "$tmp/$name.log" | sed 's/.*://')
    if [ -n "$port" ]; then URL=http://127.0.0.1:$port; return 0; fi
    kill -0 "${server_pid[$name]}" 2>/dev/null || break
    sleep 0.1
  done
  echo "server $name did not start:"; cat "$tmp/$name.log"; exit 1
}

stop_server() {
  local name=$1 pid=${server_pid[$1]} rc
  kill -TERM "$pid"
  # Bounded: a server that does not exit within 15 s is a failure (and is killed at exit).
  for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then echo "server $name ignored SIGTERM"; return 99; fi
  wait "$pid"; rc=$?
  unset "server_pid[$name]"
  return $rc
}

# metric NAME: its value from /metrics (first line that starts with the name).
metric() { curl -s --max-time 5 "$URL/metrics" | awk -v n="$1" '$1 == n {print $2; exit}'; }

finish() { [ "$fails" = 0 ] && echo "$1: all checks passed" || { echo "$fails $1 check(s) failed"; exit 1; }; }
