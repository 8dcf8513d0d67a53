#!/usr/bin/env bash
# /v1/embeddings through the official OpenAI JavaScript client (openai_embeddings.cjs; the npm
# package installed into NPM_DIR once, shared with serve_openai_js.sh). Without node/npm or a
# reachable registry the test is skipped (77). Usage: serve_openai_js_embeddings.sh ROCMFORGE MODEL NPM_DIR
set -uo pipefail
rocmforge=$1 model=$2 npm_dir=$3
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib_server.sh"
need_openai_npm "$npm_dir"
start_server js --api-key js-key
timeout 60 node "$here/openai_embeddings.cjs" "$npm_dir/node_modules" "$URL" js-key || fail "OpenAI client embedding checks"
stop_server js || fail "server exit status"
finish "serve embeddings (OpenAI JS client)"
