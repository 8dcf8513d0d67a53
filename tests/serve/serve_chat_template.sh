#!/usr/bin/env bash
# rocmforge serve with a Jinja chat template: /apply-template gives the prompt `rocmforge
# template` prints (tools and a tool-call history included), chat completions with tools and
# tool results run, a template that raises answers 400 with its message, a tool without a name
# is a 400 naming the field, and a template that does not parse stops the server at start with
# its line and column. Usage: serve_chat_template.sh ROCMFORGE MODEL DATA_DIR
set -uo pipefail
rocmforge=$1 model=$2 data=$3
source "$(dirname "$0")/lib_server.sh"
C=(curl -s --max-time 20)
tdir=$data/chat_templates
conv=$tdir/conversations/tool-call-roundtrip.json

post() { "${C[@]}" -w '\n%{http_code}' "$URL$1" -H 'Content-Type: application/json' -d "$2"; }

start_server qwen --chat-template-file "$tdir/qwen2.5-instruct.jinja"
check "the log names the template" grep -q "chat template: jinja ($tdir/qwen2.5-instruct.jinja)" "$tmp/qwen.log"
# The conversation as OpenAI clients send it: arguments as a JSON string.
body=$(jq -c '.messages |= map(if .tool_calls then .tool_calls |= map(.function.arguments |= tojson) else . end)' "$conv")
r=$(post /apply-template "$body")
check "/apply-template: 200" test "$(tail -n 1 <<<"$r")" = 200
"$rocmforge" template -m "$model" --messages "$conv" --chat-template-file "$tdir/qwen2.5-instruct.jinja" >"$tmp/cli.txt"
sed '$d' <<<"$r" | jq -j .prompt >"$tmp/http.txt"
check "/apply-template prompt = rocmforge template's ($(wc -c <"$tmp/cli.txt") bytes)" cmp -s "$tmp/cli.txt" "$tmp/http.txt"
check "the prompt shows the tools, the call and its result" \
  grep -q '<tool_call>' "$tmp/http.txt"
grep -q '"arguments": {"location": "Paris, France"' "$tmp/http.txt" && ok "string arguments reach the template as an object" \
  || fail "arguments: $(grep -o '"arguments": .\{0,40\}' "$tmp/http.txt")"

# (The default model holds 512 tokens a request: the history without the tools' long system text.)
r=$(post /v1/chat/completions "$(jq -c 'del(.tools) + {max_tokens: 4, temperature: 0}' <<<"$body")")
check "chat completion with a tool call and its result in the history: 200" test "$(tail -n 1 <<<"$r")" = 200
check "  its prompt_tokens counted" test "$(sed '$d' <<<"$r" | jq '.usage.prompt_tokens > 50')" = true
r=$(post /v1/chat/completions "$(jq -c '. + {max_tokens: 4}' <<<"$body")")
check "with the tools too: 400 over the 512-token context, naming messages" \
  test "$(tail -n 1 <<<"$r") $(sed '$d' <<<"$r" | jq -r .error.param)" = "400 messages"

r=$(post /v1/chat/completions '{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"description":"no name"}}]}')
check "a tool without a name: 400 naming tools[0].function.name" \
  test "$(tail -n 1 <<<"$r") $(sed '$d' <<<"$r" | jq -r .error.param)" = "400 tools[0].function.name"
stop_server qwen

# chat_template_kwargs: Qwen3's enable_thinking false closes an empty think block.
start_server qwen3 --chat-template-file "$tdir/qwen3.jinja"
r=$(post /apply-template '{"messages":[{"role":"user","content":"hi"}],"chat_template_kwargs":{"enable_thinking":false}}')
check "chat_template_kwargs reach the template" test "$(sed '$d' <<<"$r" | jq -r .prompt)" = $'<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>'
r=$(post /apply-template '{"messages":[{"role":"user","content":"hi"}],"chat_template_kwargs":{"messages":[]}}')
check "chat_template_kwargs cannot replace messages: 400" test "$(tail -n 1 <<<"$r")" = 400
stop_server qwen3

# Mistral's template raises for roles that do not alternate: 400 with its message.
start_server mistral --chat-template-file "$tdir/mistral-7b-instruct-v0.3.jinja"
r=$(post /v1/chat/completions '{"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}],"max_tokens":2}')
check "a template that raises: 400" test "$(tail -n 1 <<<"$r")" = 400
check "  with the template's message" test "$(sed '$d' <<<"$r" | jq -r .error.message)" = \
  "the chat template raised: After the optional system message, conversation roles must alternate user/assistant/user/assistant/..."
r=$(post /apply-template '{"messages":[{"role":"assistant","content":"a"}]}')
check "/apply-template: the same 400" test "$(tail -n 1 <<<"$r")" = 400
check "the server still answers" test "$("${C[@]}" "$URL/health")" = '{"status":"ok"}'
stop_server mistral

# A template that does not parse: the server does not start, and says where.
printf 'ok\n{%% for m in messages %%}\n{{ m.content | nosuch }}\n{%% endfor %%}\n' >"$tmp/bad.jinja"
"$rocmforge" serve -m "$model" --port 0 --chat-template-file "$tmp/bad.jinja" >"$tmp/bad.log" 2>&1
rc=$?
check "a template that does not parse: exit 2" test $rc = 2
check "  naming line 3, column 16 and the filter" grep -q "does not parse: line 3, column 16: no filter named 'nosuch'" "$tmp/bad.log"

finish "serve chat templates"
