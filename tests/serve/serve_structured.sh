# Sourced by serve_curl.sh with its server running (URL, post, body_of, status_of, check, fail):
# response_format json_schema / json_object and GBNF grammars give output that parses and
# follows the schema for every choice and seed, streamed or not, beside unconstrained requests;
# logit_bias forces and bans tokens; /tokenize, /detokenize, /props; and every bad new field is
# a 400 naming it.
# Small enough that its longest output (whitespace is free between tokens) fits max_tokens.
schema='{"type":"object","properties":{"name":{"type":"string","maxLength":10},"age":{"type":"integer","minimum":0,"maximum":120},
  "tribe":{"enum":["Judah","Levi"]},"sons":{"type":"array","items":{"type":"string","maxLength":6},"minItems":1,"maxItems":2}},
  "required":["name","age","tribe","sons"],"additionalProperties":false}'
# The schema's rules in jq (written from the schema, not from the grammar).
valid='(.name | type == "string" and length <= 10) and (.age | type == "number" and floor == . and . >= 0 and . <= 120) and
  (.tribe | . == "Judah" or . == "Levi") and (.sons | type == "array" and length >= 1 and length <= 2 and all(type == "string" and length <= 6)) and
  (keys == ["age","name","sons","tribe"])'
rf_schema() { echo "{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"person\",\"strict\":true,\"schema\":$schema}}"; }
all_valid=1
for seed in 1 2 3; do
  r=$(body_of /v1/chat/completions "{\"messages\":[{\"role\":\"user\",\"content\":\"Who?\"}],\"n\":3,\"seed\":$seed,\"max_tokens\":450,\"response_format\":$(rf_schema)}")
  [ "$(jq "[.choices[] | .finish_reason == \"stop\" and (.message.content | fromjson | $valid)] | length == 3 and all" <<<"$r")" = true ] || { all_valid=0; echo "$r"; }
done
check "json_schema: 3 seeds x n=3, every choice valid under the schema, finish_reason stop" test $all_valid = 1
s=$("${C[@]}" -N "$URL/v1/chat/completions" -d "{\"messages\":[{\"role\":\"user\",\"content\":\"Who?\"}],\"seed\":9,\"max_tokens\":450,\"stream\":true,\"response_format\":$(rf_schema)}")
check "json_schema streamed: the joined deltas are valid under the schema" test "$(grep '^data: {' <<<"$s" | sed 's/^data: //' | jq -s -j '[.[].choices[0].delta.content // empty] | join("")' | jq "$valid")" = true
# Beside unconstrained requests (one batch, whole rows for the constrained one only).
plain=()
for i in 1 2 3; do "${C[@]}" "$URL/v1/completions" -d "{\"prompt\":\"Verse $i\",\"max_tokens\":40,\"temperature\":0,\"top_k\":1}" >/dev/null & plain+=($!); done
r=$(body_of /v1/completions "{\"prompt\":\"And God said\",\"n\":2,\"max_tokens\":450,\"response_format\":$(rf_schema)}")
wait "${plain[@]}"
check "json_schema among plain requests: valid" test "$(jq "[.choices[].text | fromjson | $valid] | all" <<<"$r")" = true
r=$(body_of /v1/completions '{"prompt":"In the beginning","n":3,"seed":4,"max_tokens":400,"response_format":{"type":"json_object"}}')
check "json_object: every choice a JSON object (or cut at max_tokens)" test "$(jq '[.choices[] | (.finish_reason == "stop" and (.text | fromjson | type == "object")) or .finish_reason == "length"] | all' <<<"$r")" = true
check "json_object: some choice complete" test "$(jq '[.choices[] | select(.finish_reason == "stop")] | length >= 1' <<<"$r")" = true
r=$(body_of /v1/completions '{"prompt":"Is it good?","n":4,"seed":2,"max_tokens":10,"grammar":"root ::= (\"yes\" | \"no\") \".\" [ ]? [0-9]{2}"}')
check "GBNF grammar: every choice a sentence of it" test "$(jq '[.choices[] | .finish_reason == "stop" and (.text | test("^(yes|no)\\. ?[0-9]{2}$"))] | all' <<<"$r")" = true
r=$(body_of /v1/completions '{"prompt":"x","max_tokens":200,"seed":3,"json_schema":{"type":"array","items":{"enum":[1,2]},"minItems":3,"maxItems":3}}')
check "llama.cpp's json_schema field: 3 items of the enum" test "$(jq '.choices[0].text | fromjson | length == 3 and all(. == 1 or . == 2)' <<<"$r")" = true

# logit_bias: +100 makes a token every greedy pick, -100 bans the greedy first token.
the=$(body_of /tokenize '{"content":"In the"}' | jq '.tokens[1]')
check "logit_bias +100: the token every time" test "$(body_of /v1/completions "{\"prompt\":\"In the beginning\",\"max_tokens\":4,\"temperature\":0,\"logit_bias\":{\"$the\":100}}" | jq -r '.choices[0].text')" = \
  "$(body_of /detokenize "{\"tokens\":[$the,$the,$the,$the]}" | jq -r '.content')"
first=$(body_of /v1/completions '{"prompt":"In the beginning","max_tokens":1,"temperature":0,"logprobs":0}' | jq -r '.choices[0].logprobs.tokens[0]')
first_id=$(body_of /tokenize "{\"content\":\"In the beginning$first\",\"with_pieces\":true}" | jq --arg p "$first" '[.tokens[] | select(.piece == $p) | .id] | last')
banned=$(body_of /v1/completions "{\"prompt\":\"In the beginning\",\"max_tokens\":1,\"temperature\":0,\"logprobs\":0,\"logit_bias\":{\"$first_id\":-100}}" | jq -r '.choices[0].logprobs.tokens[0]')
check "logit_bias -100 bans the greedy token ('$first' -> '$banned')" test -n "$banned" -a "$banned" != "$first"

# /tokenize, /detokenize, /props as llama.cpp's server.
ids=$("$rocmforge" tokenize -m "$model" -p "In the beginning" --ids)
check "/tokenize add_special = the CLI's ids" test "$(body_of /tokenize '{"content":"In the beginning","add_special":true}' | jq -c '.tokens')" = "$(jq -c . <<<"$ids")"
check "/tokenize without add_special: no BOS" test "$(body_of /tokenize '{"content":"In the beginning"}' | jq -c '.tokens')" = "$(jq -c '.[1:]' <<<"$ids")"
check "/detokenize(/tokenize(x)) = x" test "$(body_of /detokenize "{\"tokens\":$(body_of /tokenize '{"content":"And God said"}' | jq -c .tokens)}" | jq -r .content)" = "And God said"
check "/props: slots, n_ctx, model path, chat template" test "$("${C[@]}" "$URL/props" | jq -r '[.total_slots, .n_ctx > 0, (.model_path | endswith(".gguf")), (.chat_template | length > 0), .default_generation_settings.n_ctx > 0] | join(" ")')" = "4 true true true true"
check "GET /tokenize -> 405" test "$("${C[@]}" -o /dev/null -w '%{http_code}' "$URL/tokenize")" = 405
check "POST /props -> 405" test "$(status_of /props '{}')" = 405

# Bad new fields: 400 naming them.
sbad() { # sbad DESCRIPTION PARAM PATTERN BODY [PATH]
  local out code
  out=$(post "${5:-/v1/chat/completions}" "$4"); code=$(tail -n 1 <<<"$out")
  if [ "$code" = 400 ] && sed '$d' <<<"$out" | jq -e --arg p "$2" ".error.param == \$p and (.error.message | test(\"$3\"))" >/dev/null; then ok "$1 -> 400"; else fail "$1 -> $out"; fi
}
M='"messages":[{"role":"user","content":"x"}]'
sbad "schema keyword it cannot express" response_format.json_schema.schema "keyword 'pattern' is not supported" "{$M,\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"x\",\"schema\":{\"type\":\"string\",\"pattern\":\"a\"}}}}"
sbad "bound on a number" response_format.json_schema.schema "'minimum' on a number is not supported .only on an integer. .at /properties/n." "{$M,\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"x\",\"schema\":{\"properties\":{\"n\":{\"type\":\"number\",\"minimum\":0}}}}}}"
sbad "json_schema without schema" response_format.json_schema.schema "is required" "{$M,\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"x\"}}}"
sbad "unknown response_format type" response_format.type "text, json_object or json_schema" "{$M,\"response_format\":{\"type\":\"yaml\"}}"
sbad "grammar that does not parse" grammar "line 2, column 11: undefined rule 'b'" "{$M,\"grammar\":\"root ::= a\\na ::= \\\"x\\\" b\"}"
sbad "grammar and response_format" response_format "cannot both" "{$M,\"grammar\":\"root ::= \\\"a\\\"\",\"response_format\":{\"type\":\"json_object\"}}"
sbad "logit_bias key not a token id" logit_bias "token ids" "{$M,\"logit_bias\":{\"the\":1}}"
sbad "logit_bias out of range" logit_bias "between -100 and 100" "{$M,\"logit_bias\":{\"5\":-300}}"
sbad "logit_bias beyond the vocabulary" logit_bias "vocabulary has 4096" '{"prompt":"x","logit_bias":{"4096":1}}' /v1/completions
sbad "/detokenize id beyond the vocabulary" "tokens[1]" "outside the vocabulary" '{"tokens":[1,99999]}' /detokenize
sbad "/tokenize without content" content "'content' is required" '{"add_special":true}' /tokenize
sbad "/tokenize unknown field" text "unsupported field 'text'" '{"content":"a","text":1}' /tokenize
