#!/usr/bin/env bash
# rocmforge serve driven by the official OpenAI JavaScript client (npm package openai, installed
# into NPM_DIR once). Without node/npm or a reachable registry the test is skipped (77).
# Usage: serve_openai_js.sh ROCMFORGE MODEL NPM_DIR
set -uo pipefail
rocmforge=$1 model=$2 npm_dir=$3
here=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null && command -v npm >/dev/null || { echo "SKIP: node/npm not installed"; exit 77; }
if [ ! -f "$npm_dir/node_modules/openai/package.json" ]; then
  mkdir -p "$npm_dir"
  if ! timeout 120 npm install --prefix "$npm_dir" --no-audit --no-fund --silent openai@4 >"$npm_dir/install.log" 2>&1; then
    echo "SKIP: npm install openai failed (registry unreachable?):"; tail -n 3 "$npm_dir/install.log"; exit 77
  fi
fi
source "$here/lib_server.sh"
start_server js --api-key js-key
timeout 60 node "$here/openai_client.cjs" "$npm_dir/node_modules" "$URL" js-key || fail "OpenAI client checks"
timeout 60 node "$here/openai_structured.cjs" "$npm_dir/node_modules" "$URL" js-key || fail "OpenAI client structured-output checks"
for _ in $(seq 50); do [ "$(curl -s -H 'Authorization: Bearer js-key' "$URL/metrics" | awk '$1=="rocmforge_running_sequences"{print $2}')" = 0 ] && break; sleep 0.1; done
cancelled=$(curl -s -H 'Authorization: Bearer js-key' "$URL/metrics" | awk '$1=="rocmforge_requests_cancelled_total"{print $2}')
check "the aborted stream was cancelled on the server ($cancelled)" test "${cancelled:-0}" -ge 1
stop_server js || fail "server exit status"
finish "serve (OpenAI JS client)"
