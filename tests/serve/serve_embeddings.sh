#!/usr/bin/env bash
# POST /v1/embeddings with curl, and the same text through `rocmforge embed` and the C API
# (embed_print): the three give the same vector; unit norm; the same input twice gives cosine 1;
# a batch of inputs equals the inputs one by one; text = its token ids; base64 decodes to the
# same floats; pooling and dimensions; every kind of bad request is a 400 naming the field;
# embeddings between generation requests leave the generated text as it was.
# Usage: serve_embeddings.sh ROCMFORGE MODEL EMBED_PRINT
set -uo pipefail
rocmforge=$1 model=$2 embed_print=$3
source "$(dirname "$0")/lib_server.sh"
C=(curl -s --max-time 20)

start_server main --parallel 2
post() { "${C[@]}" -w '\n%{http_code}' "$URL$1" -H 'Content-Type: application/json' -d "$2"; }
status_of() { post "$1" "$2" | tail -n 1; }
body_of() { post "$1" "$2" | sed '$d'; }
# py EXPR with a, b, ... bound to the JSON files given: prints the result.
py() { local expr=$1; shift; python3 - "$expr" "$@" <<'PY'
import base64, json, math, struct, sys
vals = [json.load(open(f)) for f in sys.argv[2:]]
names = dict(zip("abcdef", vals))
def norm(v): return math.sqrt(sum(x * x for x in v))
def cos(u, v): return sum(x * y for x, y in zip(u, v)) / (norm(u) * norm(v))
def maxdiff(u, v): return max(abs(x - y) for x, y in zip(u, v)) if len(u) == len(v) else float("inf")
def f32(v): return list(struct.unpack("<%df" % len(v), struct.pack("<%df" % len(v), *v)))  # the float32 each number reads as
def b64(s): return list(struct.unpack("<%df" % (len(base64.b64decode(s)) // 4), base64.b64decode(s)))
print(eval(sys.argv[1], dict(globals(), **names)))
PY
}

text="In the beginning God created the heaven and the earth."
body_of /v1/embeddings "{\"input\":\"$text\",\"model\":\"m\"}" >"$tmp/srv.json"
check "embedding response shape" test "$(jq -r '[.object, .data[0].object, .data[0].index, .model, (.data[0].embedding | length)] | join(" ")' "$tmp/srv.json")" = "list embedding 0 m 256"
check "usage: prompt_tokens = total_tokens > 0" test "$(jq '.usage.prompt_tokens == .usage.total_tokens and .usage.prompt_tokens > 0' "$tmp/srv.json")" = true
jq '.data[0].embedding' "$tmp/srv.json" >"$tmp/srv_v.json"
check "server: norm 1" test "$(py 'abs(norm(a) - 1) < 1e-5' "$tmp/srv_v.json")" = True

"$rocmforge" embed -m "$model" -p "$text" 2>"$tmp/cli.err" | jq '.embedding' >"$tmp/cli_v.json"
check "CLI: 256 floats" test "$(jq length "$tmp/cli_v.json")" = 256
check "CLI = server (max |diff| $(py 'maxdiff(a, b)' "$tmp/cli_v.json" "$tmp/srv_v.json"))" test "$(py 'maxdiff(a, b) < 1e-6' "$tmp/cli_v.json" "$tmp/srv_v.json")" = True
"$embed_print" "$model" "$text" >"$tmp/api_v.json" 2>"$tmp/api.err" || { cat "$tmp/api.err"; fail "embed_print ran"; }
check "C API = server (max |diff| $(py 'maxdiff(a, b)' "$tmp/api_v.json" "$tmp/srv_v.json"))" test "$(py 'maxdiff(a, b) < 1e-6' "$tmp/api_v.json" "$tmp/srv_v.json")" = True
"$rocmforge" embed -m "$model" -p "$text" --pooling last 2>/dev/null | jq '.embedding' >"$tmp/cli_last.json"
"$embed_print" "$model" "$text" last >"$tmp/api_last.json" 2>/dev/null
body_of /v1/embeddings "{\"input\":\"$text\",\"pooling\":\"last\"}" | jq '.data[0].embedding' >"$tmp/srv_last.json"
check "pooling last: CLI = C API = server" test "$(py 'maxdiff(a, b) < 1e-6 and maxdiff(a, c) < 1e-6' "$tmp/cli_last.json" "$tmp/api_last.json" "$tmp/srv_last.json")" = True
check "pooling last differs from mean" test "$(py 'cos(a, b) < 0.9999' "$tmp/srv_last.json" "$tmp/srv_v.json")" = True
"$rocmforge" embed -m "$model" -p "$text" --no-normalize 2>/dev/null | jq '.embedding' >"$tmp/cli_raw.json"
check "--no-normalize: the same direction, not unit length" test "$(py 'abs(cos(a, b) - 1) < 1e-6 and abs(norm(a) - 1) > 1e-3' "$tmp/cli_raw.json" "$tmp/srv_v.json")" = True

# A batch of inputs = each one alone; the same text twice: cosine 1; the text = its token ids.
body_of /v1/embeddings "{\"input\":[\"$text\",\"And God said\",\"$text\"]}" >"$tmp/batch.json"
check "batch: indexes 0..2" test "$(jq -c '[.data[].index]' "$tmp/batch.json")" = "[0,1,2]"
body_of /v1/embeddings '{"input":"And God said"}' | jq '.data[0].embedding' >"$tmp/one.json"
jq '[.data[].embedding]' "$tmp/batch.json" >"$tmp/batch_v.json"
check "batch[0] = alone" test "$(py 'maxdiff(a[0], b) == 0' "$tmp/batch_v.json" "$tmp/srv_v.json")" = True
check "batch[1] = alone" test "$(py 'maxdiff(a[1], b) == 0' "$tmp/batch_v.json" "$tmp/one.json")" = True
check "same text twice: cosine 1" test "$(py 'abs(cos(a[0], a[2]) - 1) < 1e-12' "$tmp/batch_v.json")" = True
check "different texts: cosine < 1" test "$(py 'cos(a[0], a[1]) < 0.9999' "$tmp/batch_v.json")" = True
# 20 inputs: two jobs of up to 16, several inputs per graph.
many=$(python3 -c 'import json,sys; print(json.dumps({"input": [sys.argv[1] if i % 2 else "And God said" for i in range(20)]}))' "$text")
body_of /v1/embeddings "$many" | jq '[.data[].embedding]' >"$tmp/many.json"
check "20 inputs (two jobs) = each alone" test "$(py 'len(a) == 20 and all(maxdiff(v, c if i % 2 else b) == 0 for i, v in enumerate(a))' "$tmp/many.json" "$tmp/one.json" "$tmp/srv_v.json")" = True
ids=$("$rocmforge" tokenize -m "$model" -p "$text" --ids --no-parse-special 2>/dev/null)
body_of /v1/embeddings "{\"input\":$ids}" | jq '.data[0].embedding' >"$tmp/ids.json"
check "token ids $ids = the text" test "$(py 'maxdiff(a, b) == 0' "$tmp/ids.json" "$tmp/srv_v.json")" = True
body_of /v1/embeddings "{\"input\":[$ids,[1,2,3]]}" >"$tmp/ids2.json"
check "list of token arrays: 2 vectors, usage 3 + $(jq length <<<"$ids") tokens" test "$(jq "[(.data | length), .usage.prompt_tokens] == [2, 3 + $(jq length <<<"$ids")]" "$tmp/ids2.json")" = true
body_of /v1/embeddings "{\"input\":\"$text\",\"encoding_format\":\"base64\"}" | jq '.data[0].embedding' >"$tmp/b64.json"
check "base64 decodes to the same float32s" test "$(py 'len(b64(a)) == 256 and b64(a) == f32(b)' "$tmp/b64.json" "$tmp/srv_v.json")" = True
check "dimensions = the model's width: 200" test "$(status_of /v1/embeddings '{"input":"x","dimensions":256}')" = 200

# Bad requests: 400 naming the field.
bad() { # DESCRIPTION BODY PARAM
  local r; r=$(post /v1/embeddings "$2")
  check "400 ($3): $1" test "$(tail -n 1 <<<"$r") $(sed '$d' <<<"$r" | jq -r '.error.param')" = "400 $3"
}
bad "no input" '{"model":"m"}' input
bad "empty string" '{"input":""}' input
bad "empty list" '{"input":[]}' input
bad "empty token array in a list" '{"input":[[1],[]]}' input
bad "a number" '{"input":5}' input
bad "an object" '{"input":{"a":1}}' input
bad "mixed strings and arrays" '{"input":["a",[1,2]]}' input
bad "mixed ids and strings" '{"input":[1,"a"]}' input
bad "token id outside the vocabulary" '{"input":[1,4096]}' input
bad "negative token id" '{"input":[[1,-1]]}' input
bad "float token id" '{"input":[1,2.5]}' input
long=$(python3 -c 'print([1] * 513)')
bad "longer than the context" "{\"input\":$long}" input
bad "encoding_format" '{"input":"a","encoding_format":"int8"}' encoding_format
bad "dimensions other than 256" '{"input":"a","dimensions":64}' dimensions
bad "dimensions a string" '{"input":"a","dimensions":"256"}' dimensions
bad "model a number" '{"input":"a","model":3}' model
bad "pooling" '{"input":"a","pooling":"max"}' pooling
bad "unknown field" '{"input":"a","encoding":"float"}' encoding
check "malformed JSON: 400" test "$(status_of /v1/embeddings '{"input":')" = 400
check "GET /v1/embeddings: 405" test "$("${C[@]}" -o /dev/null -w '%{http_code}' "$URL/v1/embeddings")" = 405

# Embeddings while generating: the generated text is the one without them.
gen='{"prompt":"In the beginning","max_tokens":40,"temperature":0}'
alone=$(body_of /v1/completions "$gen" | jq -r '.choices[0].text')
body_of /v1/completions "$gen" >"$tmp/gen.json" &
gen_pid=$!
for i in 1 2 3 4 5; do body_of /v1/embeddings "{\"input\":[\"$text\",\"And God said\"]}" >"$tmp/during$i.json"; done
wait $gen_pid
check "generation beside embeddings: the same text" test "$(jq -r '.choices[0].text' "$tmp/gen.json")" = "$alone"
jq '.data[0].embedding' "$tmp/during5.json" >"$tmp/during_v.json"
check "embedding beside generation: the same vector" test "$(py 'maxdiff(a, b) == 0' "$tmp/during_v.json" "$tmp/srv_v.json")" = True
check "embeddings counted in /metrics" test "$(curl -s --max-time 5 "$URL/metrics" | grep -c 'endpoint="/v1/embeddings"')" -ge 1

check "CLI: unknown pooling fails" test "$("$rocmforge" embed -m "$model" -p x --pooling max >/dev/null 2>&1; echo $?)" != 0
check "CLI: -p and -f together fail" test "$("$rocmforge" embed -m "$model" -p x -f /dev/null >/dev/null 2>&1; echo $?)" != 0
check "CLI: too long for -c fails" test "$("$rocmforge" embed -m "$model" -c 4 -p "$text" >/dev/null 2>&1; echo $?)" != 0
longtext=$(python3 -c 'print("the " * 600)')
check "CLI: beyond the trained context without -c fails" test "$("$rocmforge" embed -m "$model" -p "$longtext" 2>&1 >/dev/null | grep -c 'trained context of 512')" = 1
check "CLI: -c 1024 embeds it" test "$("$rocmforge" embed -m "$model" -c 1024 -p "$longtext" 2>/dev/null | jq '.n_tokens > 512')" = true
stop_server main
check "server stopped cleanly" test $? = 0
finish serve-embeddings
