#!/usr/bin/env bash
# rocmforge serve with a gpt-oss file (mkmodel tiny-gpt-oss, random weights, the default model's
# vocabulary): the built-in harmony format and its output parser are picked, /apply-template
# renders tools, a call and its result in harmony, and chat completions (whole, streamed, with
# tools) answer valid JSON whatever the weights make of it: garbage that is not harmony comes back
# raw as content. The parser itself is tested on constructed output in test_serve [harmony].
# Usage: serve_harmony.sh ROCMFORGE MODEL
set -uo pipefail
rocmforge=$1 vocab_model=$2
source "$(dirname "$0")/lib_server.sh"
C=(curl -s --max-time 30)
post() { "${C[@]}" -w '\n%{http_code}' "$URL$1" -H 'Content-Type: application/json' -d "$2"; }

model=$tmp/gpt-oss.gguf
"$rocmforge" mkmodel --shape tiny-gpt-oss --type F16 --seed 1 --vocab "$vocab_model" -o "$model" -t 2 >"$tmp/mkmodel.log" 2>&1 ||
  { cat "$tmp/mkmodel.log"; echo "mkmodel tiny-gpt-oss failed"; exit 1; }
start_server oss
check "the log names the harmony format" grep -q "using gpt-oss, its family's format" "$tmp/oss.log"
check "  and its output parser" grep -q "tool calls: parsed in the harmony format" "$tmp/oss.log"

tools='[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]'
history='[{"role":"user","content":"Weather in Paris?"},
  {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
  {"role":"tool","tool_call_id":"call_1","content":"21 C"}]'
r=$(post /apply-template "{\"messages\":$history,\"tools\":$tools}")
check "/apply-template with tools and a call: 200" test "$(tail -n 1 <<<"$r")" = 200
prompt=$(sed '$d' <<<"$r" | jq -r .prompt)
check "  the tools as a TypeScript namespace" grep -q 'type get_weather = (_: {' <<<"$prompt"
check "  the call on commentary" grep -qF '<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city":"Paris"}<|call|>' <<<"$prompt"
check "  the result from the function" grep -qF '<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>21 C<|end|><|start|>assistant' <<<"$prompt"

r=$(post /v1/chat/completions '{"messages":[{"role":"user","content":"Hi"}],"max_tokens":8,"temperature":0}')
check "a chat completion: 200" test "$(tail -n 1 <<<"$r")" = 200
check "  a message with string content" test "$(sed '$d' <<<"$r" | jq -r '.choices[0].message.content | type')" = string
r=$(post /v1/chat/completions "{\"messages\":$history,\"tools\":$tools,\"max_tokens\":8,\"temperature\":0}")
check "with tools and a tool-call history: 200" test "$(tail -n 1 <<<"$r")" = 200
check "  finish_reason stop, tool_calls or length" grep -qE '^(stop|tool_calls|length)$' <<<"$(sed '$d' <<<"$r" | jq -r '.choices[0].finish_reason')"
"${C[@]}" -N "$URL/v1/chat/completions" -H 'Content-Type: application/json' \
  -d "{\"messages\":$history,\"tools\":$tools,\"max_tokens\":8,\"temperature\":0,\"stream\":true}" >"$tmp/stream.txt"
check "streamed: ends with [DONE]" grep -q '^data: \[DONE\]' "$tmp/stream.txt"
check "  every chunk valid JSON" bash -c "grep '^data: {' '$tmp/stream.txt' | sed 's/^data: //' | jq -e . >/dev/null"
r=$(post /v1/chat/completions "{\"messages\":$history,\"tools\":$tools,\"tool_choice\":\"required\",\"max_tokens\":24,\"temperature\":0}")
check "tool_choice required: a call in the grammar's JSON" \
  test "$(sed '$d' <<<"$r" | jq -r '.choices[0].message.tool_calls[0].function.name // .choices[0].finish_reason')" != null
stop_server oss
finish "serve harmony"
