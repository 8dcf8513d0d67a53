#!/usr/bin/env bash
# /v1/embeddings through the official OpenAI JavaScript client (openai_embeddings.cjs; the npm
# package installed into NPM_DIR once, shared with serve_openai_js.sh). Without node/npm or a
# reachable registry the test is skipped (77). Usage: serve_openai_js_embeddings.sh ROCMFORGE MODEL NPM_DIR
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
timeout 60 node "$here/openai_embeddings.cjs" "$npm_dir/node_modules" "$URL" js-key || fail "OpenAI client embedding checks"
stop_server js || fail "server exit status"
finish "serve embeddings (OpenAI JS client)"
