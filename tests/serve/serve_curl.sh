#!/usr/bin/env bash
# rocmforge serve driven with curl: the endpoints, streaming, stop strings, usage counts, every
# kind of bad request, the API key, the wait queue, batching that does not change the tokens,
# cancellation by disconnect, and graceful shutdown. Usage: serve_curl.sh ROCMFORGE MODEL
# [SERVE_ARGS...] (given to every server started).
set -uo pipefail
rocmforge=$1 model=$2
serve_extra=("${@:3}")
source "$(dirname "$0")/lib_server.sh"
C=(curl -s --max-time 20)

start_server main --parallel 4
post() { "${C[@]}" -w '\n%{http_code}' "$URL$1" -H 'Content-Type: application/json' -d "$2"; }
# status_of PATH BODY -> HTTP status; body_of -> the body
status_of() { post "$1" "$2" | tail -n 1; }
body_of() { post "$1" "$2" | sed '$d'; }

check "/health" test "$("${C[@]}" "$URL/health")" = '{"status":"ok"}'
check "/v1/models lists the model" test "$("${C[@]}" "$URL/v1/models" | jq -r '.data[0].id')" = default

r=$(body_of /v1/completions '{"prompt":"In the beginning","max_tokens":12,"temperature":0}')
check "completion: 12 tokens, finish_reason length" test "$(jq -r '[.usage.completion_tokens, .choices[0].finish_reason] | join(" ")' <<<"$r")" = "12 length"
check "completion: prompt_tokens counted, total = sum" test "$(jq '.usage.prompt_tokens > 1 and .usage.total_tokens == .usage.prompt_tokens + .usage.completion_tokens' <<<"$r")" = true
full=$(jq -r '.choices[0].text' <<<"$r")

r=$(body_of /v1/chat/completions '{"model":"x","messages":[{"role":"system","content":"Answer."},{"role":"user","content":"Who made the heaven?"}],"max_tokens":10,"temperature":0}')
check "chat: assistant message, usage" test "$(jq -r '[.object, .choices[0].message.role, .usage.completion_tokens <= 10] | join(" ")' <<<"$r")" = "chat.completion assistant true"

# Streaming: the chunks' text joined equals the non-streamed text; ends in [DONE].
s=$("${C[@]}" -N "$URL/v1/completions" -d '{"prompt":"In the beginning","max_tokens":12,"temperature":0,"stream":true,"stream_options":{"include_usage":true}}')
check "stream ends with data: [DONE]" test "$(grep -v '^$' <<<"$s" | tail -n 1)" = "data: [DONE]"
streamed=$(grep '^data: {' <<<"$s" | sed 's/^data: //' | jq -j '.choices[0].text // ""')
check "stream text = non-stream text" test "$streamed" = "$full"
check "stream usage chunk: 12 tokens" test "$(grep '^data: {' <<<"$s" | sed 's/^data: //' | jq -s '.[-1].usage.completion_tokens')" = 12
s=$("${C[@]}" -N "$URL/v1/chat/completions" -d '{"messages":[{"role":"user","content":"Hi"}],"max_tokens":5,"stream":true}')
check "chat stream: role first, finish_reason last" test "$(grep '^data: {' <<<"$s" | sed 's/^data: //' | jq -s -r '[.[0].choices[0].delta.role, .[-1].choices[0].finish_reason] | join(" ")')" = "assistant length"

# Stop string: cut before it, finish_reason stop (the word is in the greedy text above).
word=$(awk '{print $3}' <<<"$full")
r=$(body_of /v1/completions "{\"prompt\":\"In the beginning\",\"max_tokens\":12,\"temperature\":0,\"stop\":[\"$word\"]}")
check "stop '$word': text is the prefix before it" test "$(jq -r '.choices[0].text' <<<"$r")" = "${full%%"$word"*}"
check "stop: finish_reason stop" test "$(jq -r '.choices[0].finish_reason' <<<"$r")" = stop

# Several prompts and n > 1: choice k = prompt i x n + j, each seeded seed + k, so it equals the
# single request with that prompt and seed; each prompt counted once in usage.
single() { body_of /v1/completions "{\"prompt\":\"$1\",\"max_tokens\":6,\"temperature\":0.9,\"seed\":$2}"; }
r=$(body_of /v1/completions '{"prompt":["In the beginning","And God said"],"n":2,"max_tokens":6,"temperature":0.9,"seed":11}')
check "2 prompts x n=2: 4 choices, indexes 0..3" test "$(jq -c '[.choices[].index]' <<<"$r")" = "[0,1,2,3]"
ok_choices=1 prompt_sum=0 completion_sum=0
for k in 0 1 2 3; do
  p="In the beginning"; [ $k -ge 2 ] && p="And God said"
  s1=$(single "$p" $((11 + k)))
  [ "$(jq -r ".choices[$k].text" <<<"$r")" = "$(jq -r '.choices[0].text' <<<"$s1")" ] || ok_choices=0
  [ $((k % 2)) = 0 ] && prompt_sum=$((prompt_sum + $(jq '.usage.prompt_tokens' <<<"$s1")))
  completion_sum=$((completion_sum + $(jq '.usage.completion_tokens' <<<"$s1")))
done
check "choice k = the single request with seed 11 + k" test $ok_choices = 1
check "usage: each prompt once ($prompt_sum), every choice's tokens ($completion_sum)" \
  test "$(jq -r '[.usage.prompt_tokens, .usage.completion_tokens] | join(" ")' <<<"$r")" = "$prompt_sum $completion_sum"
check "n=3 on one prompt: 3 different texts" test "$(body_of /v1/completions '{"prompt":"And God said","n":3,"max_tokens":8,"temperature":1,"seed":5}' | jq '[.choices[].text] | unique | length')" = 3

# Token prompts are used as given: the string prompt's ids (BOS included) give the same text.
ids=$("$rocmforge" tokenize -m "$model" -p "In the beginning" --ids)
r=$(body_of /v1/completions "{\"prompt\":$ids,\"max_tokens\":12,\"temperature\":0}")
check "prompt as token ids = the string prompt" test "$(jq -r '.choices[0].text' <<<"$r")" = "$full"
r=$(body_of /v1/completions "{\"prompt\":[$ids,$ids],\"max_tokens\":12,\"temperature\":0}")
check "prompt as token arrays: 2 choices, both the same greedy text" test "$(jq -r '[.choices[].text] | unique | .[0]' <<<"$r")" = "$full"

# echo: the prompt comes back before the completion, streamed as each choice's first chunk.
r=$(body_of /v1/completions '{"prompt":"In the beginning","max_tokens":12,"temperature":0,"echo":true}')
check "echo: text = prompt + completion" test "$(jq -r '.choices[0].text' <<<"$r")" = "In the beginning$full"
s=$("${C[@]}" -N "$URL/v1/completions" -d '{"prompt":"In the beginning","max_tokens":12,"temperature":0,"echo":true,"stream":true}')
check "echo streamed: first chunk the prompt, all = prompt + completion" test \
  "$(grep '^data: {' <<<"$s" | sed 's/^data: //' | jq -s -j '(.[0].choices[0].text), "|", (map(.choices[0].text) | join(""))')" = "In the beginning|In the beginning$full"

# Bytes that are not UTF-8 (the byte tokens of a token prompt, echoed) come back as U+FFFD:
# the response stays valid UTF-8 JSON, whole and streamed.
r=$(body_of /v1/completions '{"prompt":[200,201],"max_tokens":2,"echo":true,"logprobs":1}')
check "byte tokens echoed: valid UTF-8, U+FFFD in the text" test "$(iconv -f UTF-8 -t UTF-8 <<<"$r" >/dev/null && jq -r '.choices[0].text | startswith("\ufffd")' <<<"$r")" = true
check "byte tokens echoed, streamed: valid UTF-8" iconv -f UTF-8 -t UTF-8 -o /dev/null <(curl -sN --max-time 20 "$URL/v1/completions" -d '{"prompt":[200,201],"max_tokens":2,"echo":true,"stream":true}')

# logprobs (completions): one entry per token, the greedy token the likeliest of its top N + 1,
# tokens joined = the text, text_offset where each token starts.
r=$(body_of /v1/completions '{"prompt":"In the beginning","max_tokens":12,"temperature":0,"logprobs":3}')
lp='.choices[0].logprobs'
check "logprobs: 12 entries" test "$(jq "$lp.tokens | length" <<<"$r")" = 12
check "logprobs: tokens joined = text" test "$(jq -r "$lp.tokens | join(\"\")" <<<"$r")" = "$full"
check "logprobs: top_logprobs of 3 (+ the sampled), greedy = the likeliest" test "$(jq "[$lp as \$l | range(12) | . as \$i |
  (\$l.top_logprobs[\$i] | length) <= 4 and (\$l.top_logprobs[\$i] | length) >= 3 and
  \$l.token_logprobs[\$i] == (\$l.top_logprobs[\$i] | [.[]] | max) and \$l.token_logprobs[\$i] <= 0] | all" <<<"$r")" = true
check "logprobs: text_offset = characters before each token" test "$(jq "[$lp as \$l | range(12) | . as \$i |
  \$l.text_offset[\$i] == (\$l.tokens[0:\$i] | join(\"\") | length)] | all" <<<"$r")" = true
s=$("${C[@]}" -N "$URL/v1/completions" -d '{"prompt":"In the beginning","max_tokens":12,"temperature":0,"logprobs":3,"stream":true}')
check "logprobs streamed = not streamed" test "$(grep '^data: {' <<<"$s" | sed 's/^data: //' | jq -s -c '[.[].choices[0].logprobs // empty | .tokens[]]')" = "$(jq -c "$lp.tokens" <<<"$r")"
# With a stop string: only tokens that begin before the cut, the text a prefix of their join.
r=$(body_of /v1/completions "{\"prompt\":\"In the beginning\",\"max_tokens\":12,\"temperature\":0,\"stop\":[\"$word\"],\"logprobs\":0}")
check "logprobs + stop: every token begins in the text, which they cover" test "$(jq "$lp as \$l | .choices[0].text as \$t |
  (\$l.tokens | length) >= 1 and ([\$l.text_offset[] < (\$t | length)] | all) and (\$l.tokens | join(\"\") | startswith(\$t))" <<<"$r")" = true
check "logprobs 0: top_logprobs holds the sampled token alone" test "$(jq "[$lp.top_logprobs[] | length == 1] | all" <<<"$r")" = true

# echo + logprobs: the prompt's tokens first (the first with null), then the completion's; the
# offsets where each begins in the echoed text; streamed, the first chunk is the prompt with them.
echo_lp='{"prompt":"In the beginning, God created the heaven","max_tokens":12,"temperature":0,"echo":true,"logprobs":2}'
echo_lp_whole=$(body_of /v1/completions "$echo_lp")
r=$(body_of /v1/completions '{"prompt":"In the beginning","max_tokens":12,"temperature":0,"echo":true,"logprobs":2}')
n_prompt=$(jq '.usage.prompt_tokens' <<<"$r")
check "echo + logprobs: prompt + completion entries, the first null" test "$(jq "$lp | [(.tokens | length), .token_logprobs[0], .top_logprobs[0], (.token_logprobs[1:] | map(. <= 0) | all)] | @json" <<<"$r")" = "\"[$((n_prompt + 12)),null,null,true]\""
check "echo + logprobs: each token's text at its text_offset" test "$(jq "$lp as \$l | .choices[0].text as \$t | [range(1; \$l.tokens | length) | . as \$i |
  \$t[\$l.text_offset[\$i]:] as \$at | (\$at | startswith(\$l.tokens[\$i])) or (\$at | startswith(\$l.tokens[\$i] | ltrimstr(\" \")))] | all" <<<"$r")" = true
check "echo + logprobs: the completion's entries as without echo" test "$(jq -c "$lp.tokens[$n_prompt:]" <<<"$r")" = "$(body_of /v1/completions '{"prompt":"In the beginning","max_tokens":12,"temperature":0,"logprobs":2}' | jq -c "$lp.tokens")"
s=$("${C[@]}" -N "$URL/v1/completions" -d '{"prompt":"In the beginning","max_tokens":12,"temperature":0,"echo":true,"logprobs":2,"stream":true}')
check "echo + logprobs streamed: the prompt's chunk first, all entries = not streamed" test "$(grep '^data: {' <<<"$s" | sed 's/^data: //' | jq -s -c '[.[0].choices[0].text, ([.[].choices[0].logprobs // empty | .tokens[]] | length)]')" = "[\"In the beginning\",$((n_prompt + 12))]"
# max_tokens 0 + echo + logprobs scores the prompt (what evaluation harnesses send): the prompt's
# entries as with generation, no completion token, finish_reason length; streamed the same.
r=$(body_of /v1/completions '{"prompt":"In the beginning","max_tokens":0,"temperature":0,"echo":true,"logprobs":2}')
check "max_tokens 0 + echo: the prompt's entries alone, as with generation" test "$(jq -c "[.choices[0].text, .choices[0].finish_reason, .usage.completion_tokens, $lp.tokens]" <<<"$r")" = \
  "$(body_of /v1/completions '{"prompt":"In the beginning","max_tokens":12,"temperature":0,"echo":true,"logprobs":2}' | jq -c "[\"In the beginning\", \"length\", 0, $lp.tokens[:$n_prompt]]")"
s=$("${C[@]}" -N "$URL/v1/completions" -d '{"prompt":"In the beginning","max_tokens":0,"echo":true,"logprobs":1,"stream":true}')
check "max_tokens 0 + echo streamed: the prompt's chunk, then length, then [DONE]" test "$(grep '^data: {' <<<"$s" | sed 's/^data: //' | jq -s -c '[.[0].choices[0].text, ([.[].choices[0].logprobs // empty | .tokens[]] | length), .[-1].choices[0].finish_reason]')" = "[\"In the beginning\",$n_prompt,\"length\"]"

# logprobs (chat): content entries with bytes and top_logprobs, one per token.
r=$(body_of /v1/chat/completions '{"messages":[{"role":"user","content":"Who made the heaven?"}],"max_tokens":8,"temperature":0,"logprobs":true,"top_logprobs":2}')
check "chat logprobs: one entry per token, 2 alternatives, bytes" test "$(jq '.choices[0].logprobs as $l | ($l.content | length) == .usage.completion_tokens and ([$l.content[] | (.top_logprobs | length) == 2 and (.bytes | length) >= 1] | all) and $l.refusal == null' <<<"$r")" = true
check "chat logprobs: tokens joined = the message" test "$(jq -r '[.choices[0].logprobs.content[].token] | join("")' <<<"$r")" = "$(jq -r '.choices[0].message.content' <<<"$r")"
check "chat without logprobs: null" test "$(body_of /v1/chat/completions '{"messages":[{"role":"user","content":"Hi"}],"max_tokens":2}' | jq '.choices[0].logprobs')" = null
s=$("${C[@]}" -N "$URL/v1/chat/completions" -d '{"messages":[{"role":"user","content":"Hi"}],"n":2,"max_tokens":3,"stream":true,"stream_options":{"include_usage":true}}')
check "chat stream n=2: a role chunk and a finish_reason for each choice" test "$(grep '^data: {' <<<"$s" | sed 's/^data: //' | jq -s -c '[([.[] | select(.choices[0].delta.role == "assistant") | .choices[0].index] | sort), ([.[] | select(.choices[0].finish_reason != null) | .choices[0].index] | sort), .[-1].usage.completion_tokens]')" = "[[0,1],[0,1],6]"

# Structured output and logit_bias, llama.cpp's /tokenize, /detokenize, /props: the
# checks are in serve_structured.sh (sourced: the same server and helpers).
source "$(dirname "$0")/serve_structured.sh"

# Bad requests: 400 with an OpenAI error body naming the problem.
bad() { # bad DESCRIPTION STATUS PATTERN BODY [PATH]
  local out code
  out=$(post "${5:-/v1/completions}" "$4"); code=$(tail -n 1 <<<"$out")
  if [ "$code" = "$2" ] && sed '$d' <<<"$out" | jq -e ".error.message | test(\"$3\")" >/dev/null; then ok "$1 -> $code"; else fail "$1 -> $out"; fi
}
bad "malformed JSON" 400 "malformed JSON" '{"prompt": "x",'
bad "not an object" 400 "JSON object" '[1,2]'
bad "invalid UTF-8 in a string" 400 "malformed JSON.*encoding" $'{"prompt":"a\xff"}'
bad "wrong type" 400 "max_tokens.*integer" '{"prompt":"x","max_tokens":"ten"}'
bad "unknown field" 400 "unsupported field 'suffix'" '{"prompt":"x","suffix":"y"}'
bad "missing prompt" 400 "'prompt' is required" '{"max_tokens":3}'
bad "n=0" 400 "'n' must be between 1 and 128" '{"prompt":"x","n":0}'
bad "n beyond --parallel + --queue" 400 "at most 68 sequences" '{"prompt":"x","n":100}'
bad "n x prompts over 128" 400 "at most 128" '{"prompt":["a","b"],"n":65}'
bad "mixed prompt kinds" 400 "prompt.1.. must be a string .the prompts of one request are all of one kind., got an array" '{"prompt":["a",[1,2]]}'
bad "token id beyond the vocabulary" 400 "vocabulary has 4096" '{"prompt":[1,4096]}'
bad "empty token array" 400 "at least one token" '{"prompt":[[]]}'
bad "logprobs 6" 400 "logprobs.*between 0 and 5" '{"prompt":"x","logprobs":6}'
bad "chat: top_logprobs without logprobs" 400 "needs 'logprobs': true" '{"messages":[{"role":"user","content":"x"}],"top_logprobs":2}' /v1/chat/completions
bad "chat: echo" 400 "unsupported field 'echo'" '{"messages":[{"role":"user","content":"x"}],"echo":true}' /v1/chat/completions
bad "absurd max_tokens" 400 "exceed" '{"prompt":"x","max_tokens":1000000000}'
bad "max_tokens 0" 400 "at least 1" '{"prompt":"x","max_tokens":0}'
bad "temperature 5" 400 "temperature" '{"prompt":"x","temperature":5}'
bad "empty stop" 400 "stop" '{"prompt":"x","stop":[""]}'
bad "bad role" 400 "role" '{"messages":[{"role":"wizard","content":"x"}]}' /v1/chat/completions
bad "empty messages" 400 "at least one" '{"messages":[]}' /v1/chat/completions
long=$(printf 'and the Lord spake unto Moses %.0s' $(seq 200))
bad "prompt longer than the context" 400 "prompt has [0-9]+ tokens" "{\"prompt\":\"$long\"}"
check "unknown path -> 404" test "$("${C[@]}" -o /dev/null -w '%{http_code}' "$URL/v2/nothing")" = 404
check "GET on a POST endpoint -> 405" test "$("${C[@]}" -o /dev/null -w '%{http_code}' "$URL/v1/completions")" = 405
head -c 2000000 /dev/zero | tr '\0' 'a' >"$tmp/big"
check "2 MB body -> 413" test "$("${C[@]}" -o /dev/null -w '%{http_code}' "$URL/v1/completions" --data-binary @"$tmp/big")" = 413
check "32 KB header -> 431" test "$("${C[@]}" -o /dev/null -w '%{http_code}' "$URL/health" -H "X-Big: $(head -c 32000 "$tmp/big")")" = 431

# llama.cpp's top_k, seeded: the same tokens alone (the step may read only each row's top-k
# candidates) and beside a request with logprobs (the steps then read whole rows).
req='{"prompt":"And God said","max_tokens":16,"temperature":0.8,"top_k":20,"seed":3}'
alone=$(body_of /v1/completions "$req" | jq -r '.choices[0].text')
"${C[@]}" "$URL/v1/completions" -d '{"prompt":"Verse 9: the children","max_tokens":60,"temperature":0,"logprobs":2}' >/dev/null &
lp_pid=$!
sleep 0.05
beside=$(body_of /v1/completions "$req" | jq -r '.choices[0].text')
wait $lp_pid
check "top_k request alone = beside a logprobs request" test "$alone" = "$beside"
check "top_k request: 16 tokens" test "$(body_of /v1/completions "$req" | jq '.usage.completion_tokens')" = 16
# Batching does not change tokens: the same seeded request alone and among 8 others.
req='{"prompt":"And God said","max_tokens":24,"temperature":0.9,"seed":7}'
alone=$(body_of /v1/completions "$req" | jq -r '.choices[0].text')
others=()
for i in 1 2 3 4 5 6 7 8; do
  "${C[@]}" "$URL/v1/completions" -d "{\"prompt\":\"Verse $i: the children of Israel\",\"max_tokens\":$((20 + i * 9)),\"temperature\":0.8}" >/dev/null &
  others+=($!)
done
sleep 0.05
together=$(body_of /v1/completions "$req" | jq -r '.choices[0].text')
wait "${others[@]}" # not a bare wait: the server is a child too
check "seeded request alone = among 8 others" test "$alone" = "$together"
check "KV pages back to 0 when idle" test "$(metric rocmforge_kv_pages_used)" = 0
# The scheduler's step counters saw both kinds of step and every token those requests decoded.
check "decode-only steps counted" test "$(metric 'rocmforge_scheduler_steps_total{kind="decode"}')" -gt 0
check "mixed steps counted with their prompt tokens" test "$(metric 'rocmforge_scheduler_prompt_tokens_total{kind="mixed"}')" -gt 0
check "decode rows <= completion tokens" test "$(( $(metric 'rocmforge_scheduler_decode_rows_total{kind="decode"}') + \
  $(metric 'rocmforge_scheduler_decode_rows_total{kind="mixed"}') ))" -le "$(metric rocmforge_completion_tokens_total)"

# Cancellation: a streaming client that leaves after the first event.
before=$(metric rocmforge_requests_cancelled_total)
curl -sN --max-time 20 "$URL/v1/completions" -d '{"prompt":"In the beginning","max_tokens":480,"temperature":0,"stream":true}' | head -n 1 >/dev/null
for _ in $(seq 50); do [ "$(metric rocmforge_running_sequences)" = 0 ] && break; sleep 0.1; done
check "disconnect cancels the request" test "$(metric rocmforge_requests_cancelled_total)" -gt "$before"
check "its KV pages are freed" test "$(metric rocmforge_kv_pages_used)" = 0

# Graceful shutdown: a stream in flight still ends with [DONE]; exit status 0.
curl -sN --max-time 20 "$URL/v1/completions" -d '{"prompt":"In the beginning","max_tokens":400,"temperature":0,"stream":true}' >"$tmp/inflight" &
cpid=$!
for _ in $(seq 100); do grep -q '^data:' "$tmp/inflight" && break; sleep 0.02; done
stop_server main; rc=$?
wait $cpid
check "SIGTERM: exit 0" test "$rc" = 0
check "SIGTERM: the in-flight stream ends with [DONE]" test "$(grep -v '^$' "$tmp/inflight" | tail -n 1)" = "data: [DONE]"
check "SIGTERM: no longer listening" test "$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' "$URL/health")" = 000

# API key: 401 without or with a wrong one, /health open.
# (Also a prefill in chunks of 3 tokens: echo + logprobs gathers the prompt's entries over
# several steps, and gives the same tokens and values as one prefill.)
start_server keyed --api-key s3cret --prefill-chunk 3
r=$("${C[@]}" -H 'Authorization: Bearer s3cret' "$URL/v1/completions" -d "$echo_lp")
check "echo + logprobs, prefill in chunks of 3 = in one step" test "$(jq -n --argjson a "$r" --argjson b "$echo_lp_whole" '
  $a.choices[0].logprobs as $x | $b.choices[0].logprobs as $y | $x.tokens == $y.tokens and $x.text_offset == $y.text_offset and
  $x.token_logprobs[0] == null and ([range(1; $x.tokens | length) | ($x.token_logprobs[.] - $y.token_logprobs[.]) | fabs < 0.001] | all)')" = true
check "no key -> 401" test "$("${C[@]}" -o /dev/null -w '%{http_code}' "$URL/v1/models")" = 401
check "wrong key -> 401" test "$("${C[@]}" -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer s3creT' "$URL/v1/models")" = 401
check "right key -> 200" test "$("${C[@]}" -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer s3cret' "$URL/v1/models")" = 200
check "/health needs no key" test "$("${C[@]}" -o /dev/null -w '%{http_code}' "$URL/health")" = 200
stop_server keyed || fail "keyed server exit status"

# A full wait queue: one running, none waiting, the rest 429 with Retry-After.
start_server busy --parallel 1 --queue 0
clients=()
for i in $(seq 8); do
  "${C[@]}" -D "$tmp/h$i" -o /dev/null "$URL/v1/completions" -d '{"prompt":"In the beginning","max_tokens":400,"temperature":0}' &
  clients+=($!)
done
wait "${clients[@]}"
n429=$(grep -l '^HTTP/1.1 429' "$tmp"/h* | wc -l)
n200=$(grep -l '^HTTP/1.1 200' "$tmp"/h* | wc -l)
check "queue full: some 429 ($n429), the others 200 ($n200)" test "$n429" -ge 1 -a "$n200" -ge 1 -a $((n429 + n200)) = 8
check "429 carries Retry-After" grep -qi '^Retry-After: 1' $(grep -l '^HTTP/1.1 429' "$tmp"/h* | head -n 1)
check "n=2 where one sequence fits -> 400, not 429" test "$(status_of /v1/completions '{"prompt":"x","n":2}')" = 400
stop_server busy || fail "busy server exit status"

finish "serve (curl)"
