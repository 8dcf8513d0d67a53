#!/usr/bin/env bash
# Tool calls in rocmforge serve on the default model, which never learned tools (the constrained
# tool_choice modes must still give valid calls): the official OpenAI JavaScript client
# (openai_tools.cjs; the npm package installed into NPM_DIR once, shared with
# serve_openai_js.sh) with a plain chatml Jinja template (generic format: it does not show the
# tools, so the prompts fit the model's 512 tokens), then curl with Qwen 2.5's template (Hermes
# <tool_call> format, its tools text alone ~370 tokens). Without node/npm or a reachable
# registry the test is skipped (77).
# Usage: serve_tools.sh ROCMFORGE MODEL NPM_DIR DATA_DIR
set -uo pipefail
rocmforge=$1 model=$2 npm_dir=$3 data=$4
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib_server.sh"
need_openai_npm "$npm_dir"
start_server tools --api-key tools-key --chat-template-file "$data/chat_templates/chatml.jinja"
check "chatml: the generic tool-call format" grep -q "tool calls: parsed in the generic format" "$tmp/tools.log"
timeout 120 node "$here/openai_tools.cjs" "$npm_dir/node_modules" "$URL" tools-key || fail "OpenAI client tool-call checks"
check "the server still answers" test "$(curl -s --max-time 5 "$URL/health")" = '{"status":"ok"}'
stop_server tools || fail "server exit status"

start_server qwen --chat-template-file "$data/chat_templates/qwen2.5-instruct.jinja"
check "Qwen 2.5's template: the hermes format" grep -q "tool calls: parsed in the hermes format" "$tmp/qwen.log"
chat() { curl -s --max-time 60 "$URL/v1/chat/completions" -H 'Content-Type: application/json' -d "$1"; }
T='"messages":[{"role":"user","content":"Time?"}],"tools":[{"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{"zone":{"enum":["UTC","CET"]}},"required":["zone"]}}}]'
r=$(chat "{$T,\"tool_choice\":\"required\",\"parallel_tool_calls\":false,\"seed\":3,\"max_tokens\":100}")
check "required: a get_time call whose zone is one of the enum" test "$(jq -r '.choices[0] | [.finish_reason, .message.tool_calls[0].function.name,
  (.message.tool_calls[0].function.arguments | fromjson | .zone == "UTC" or .zone == "CET")] | join(" ")' <<<"$r")" = "tool_calls get_time true"
# auto: the model's Hermes output (held to it by a grammar) streamed: text, then the call's deltas.
g='root ::= \"On it.\\n<tool_call>\\n{\\\"name\\\": \\\"get_time\\\", \\\"arguments\\\": {\\\"zone\\\": \\\"CET\\\"}}\\n</tool_call>\"'
s=$(curl -s --max-time 60 -N "$URL/v1/chat/completions" -d "{$T,\"max_tokens\":100,\"stream\":true,\"grammar\":\"$g\"}" | grep '^data: {' | sed 's/^data: //')
check "auto streamed: content 'On it.' with no markup" test "$(jq -s -j '[.[].choices[0].delta.content // empty] | join("")' <<<"$s")" = 'On it.'
check "  the call's name once, its arguments joined" test "$(jq -s -c '[.[].choices[0].delta.tool_calls // empty | .[]] |
  [(map(.function.name // empty) | join(",")), (map(.function.arguments) | join("") | fromjson | .zone), (.[0].id | test("^call_"))]' <<<"$s")" = '["get_time","CET",true]'
check "  finish_reason tool_calls" test "$(jq -s -r '[.[].choices[0].finish_reason // empty] | last' <<<"$s")" = tool_calls
# A tool loop's second turn as OpenAI clients send it: the call (content null) and its result.
H='"messages":[{"role":"user","content":"Time?"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_time","arguments":"{\"zone\":\"CET\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"9:00"}]'
r=$(chat "{$H,\"tools\":$(jq -c .tools <<<"{$T}"),\"tool_choice\":\"none\",\"max_tokens\":4}")
check "the call and its result in the history, tool_choice none: a plain answer" \
  test "$(jq -r '.choices[0] | [.message.content != null, .message.tool_calls == null, .finish_reason != "tool_calls"] | join(" ")' <<<"$r")" = "true true true"
stop_server qwen || fail "server exit status"
finish "serve tool calls (OpenAI JS client)"
