#!/usr/bin/env bash
# rocmforge serve with a gpt-oss file (mkmodel tiny-gpt-oss, random weights, the default model's
# vocabulary): the built-in harmony format and its output parser are picked, /apply-template
# renders tools, a call and its result in harmony, and chat completions (whole, streamed, with
# tools) answer valid JSON whatever the weights make of it: garbage that is not harmony comes back
# raw as content. Then harmony held by a grammar: reasoning_content, content and a tool call,
# whole and streamed. The parser's cases are tested on constructed output in test_serve [harmony].
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
# Harmony written on purpose: a grammar holds the output to it (the vocabulary spells the
# markers out of ordinary tokens, which is the same text), so the route's parsing shows.
answer='<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final<|message|>hi there'
grammar() { jq -Rn --arg t "$1" '"root ::= " + ($t | tojson)'; }
body=$(jq -cn --argjson g "$(grammar "$answer")" '{messages:[{role:"user",content:"Hi"}],grammar:$g,max_tokens:300,temperature:0}')
r=$(post /v1/chat/completions "$body")
check "forced harmony: 200" test "$(tail -n 1 <<<"$r")" = 200
check "  content the final channel" test "$(sed '$d' <<<"$r" | jq -r '.choices[0].message.content')" = "hi there"
check "  reasoning_content the analysis" test "$(sed '$d' <<<"$r" | jq -r '.choices[0].message.reasoning_content')" = think
"${C[@]}" -N "$URL/v1/chat/completions" -H 'Content-Type: application/json' -d "$(jq -c '. + {stream: true}' <<<"$body")" >"$tmp/forced.txt"
deltas=$(grep '^data: {' "$tmp/forced.txt" | sed 's/^data: //' | jq -s '[.[].choices[0].delta]')
check "  streamed: the content deltas join to the final text" \
  test "$(jq -r '[.[].content // empty] | join("")' <<<"$deltas")" = "hi there"
check "  the reasoning deltas to the analysis" test "$(jq -r '[.[].reasoning_content // empty] | join("")' <<<"$deltas")" = think
check "  no markup in any delta" bash -c "! grep -q '<|' <<<'$(jq -c . <<<"$deltas")'"

r=$(sed '$d' <<<"$(post /v1/chat/completions "$(jq -c '.max_tokens = 60' <<<"$body")")")
check "cut by max_tokens in a header: the raw text as content, length" \
  test "$(jq -r '.choices[0] | [.finish_reason, (.message.content | startswith("<|channel|>analysis<|message|>think"))] | join(" ")' <<<"$r")" = "length true"

call='<|channel|>analysis<|message|>need weather<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}'
body=$(jq -cn --argjson g "$(grammar "$call")" --argjson tools "$tools" \
  '{messages:[{role:"user",content:"Weather?"}],tools:$tools,grammar:$g,max_tokens:300,temperature:0}')
r=$(sed '$d' <<<"$(post /v1/chat/completions "$body")")
check "forced harmony call: tool_calls, finish_reason tool_calls" \
  test "$(jq -r '.choices[0] | [.message.tool_calls[0].function.name, .message.tool_calls[0].function.arguments, .finish_reason] | join(" ")' <<<"$r")" \
  = 'get_weather {"city":"Paris"} tool_calls'
check "  content null, the reasoning kept" test "$(jq -r '.choices[0].message | [(.content | type), .reasoning_content] | join(" ")' <<<"$r")" = "null need weather"
"${C[@]}" -N "$URL/v1/chat/completions" -H 'Content-Type: application/json' -d "$(jq -c '. + {stream: true}' <<<"$body")" >"$tmp/call.txt"
check "  streamed: the call's deltas, finish_reason tool_calls" \
  test "$(grep '^data: {' "$tmp/call.txt" | sed 's/^data: //' | jq -rs '[(.[].choices[0].delta.tool_calls[0]?.function.name // empty), (.[].choices[0].finish_reason // empty)] | join(" ")')" = "get_weather tool_calls"
check "  no markup streamed" bash -c "! grep -q '<|' '$tmp/call.txt'"
stop_server oss
finish "serve harmony"
