#!/usr/bin/env bash
# rocmforge serve driven by the official OpenAI JavaScript client (npm package openai, installed
# into NPM_DIR once). Without node/npm or a reachable registry the test is skipped (77).
# Usage: serve_openai_js.sh ROCMFORGE MODEL NPM_DIR
set -uo pipefail
rocmforge=$1 model=$2 npm_dir=$3
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib_server.sh"
need_openai_npm "$npm_dir"
start_server js --api-key js-key
timeout 60 node "$here/openai_client.cjs" "$npm_dir/node_modules" "$URL" js-key || fail "OpenAI client checks"
timeout 60 node "$here/openai_structured.cjs" "$npm_dir/node_modules" "$URL" js-key || fail "OpenAI client structured-output checks"
for _ in $(seq 50); do [ "$(curl -s -H 'Authorization: Bearer js-key' "$URL/metrics" | awk '$1=="rocmforge_running_sequences"{print $2}')" = 0 ] && break; sleep 0.1; done
cancelled=$(curl -s -H 'Authorization: Bearer js-key' "$URL/metrics" | awk '$1=="rocmforge_requests_cancelled_total"{print $2}')
check "the aborted stream was cancelled on the server ($cancelled)" test "${cancelled:-0}" -ge 1
stop_server js || fail "server exit status"
finish "serve (OpenAI JS client)"
