#!/usr/bin/env bash
# Encoders end to end: a tiny bert file (write_tiny_encoder) embeds text with `rocmforge embed`
# (its CLS pooling, unit norm), mkmodel --shape tiny-bert copies its WordPiece vocab into a file
# that embeds too, POST /v1/embeddings returns the CLI's vectors for a list of inputs, and
# generating from an encoder is refused by name.
# Usage: encoder_cli.sh ROCMFORGE WRITE_TINY_ENCODER
set -uo pipefail
rocmforge=$1 writer=$2
source "$(dirname "$0")/../serve/lib_server.sh"
model=$tmp/bert.gguf
"$writer" bert "$model" || { echo "cannot write the tiny bert"; exit 1; }
py() { local expr=$1; shift; python3 - "$expr" "$@" <<'PY'
import json, math, sys
vals = [json.load(open(f)) for f in sys.argv[2:]]
names = dict(zip("abcdef", vals))
def norm(v): return math.sqrt(sum(x * x for x in v))
def maxdiff(u, v): return max(abs(x - y) for x, y in zip(u, v)) if len(u) == len(v) else float("inf")
print(eval(sys.argv[1], dict(globals(), **names)))
PY
}

"$rocmforge" embed -m "$model" -p "Hello world" >"$tmp/cli.json" 2>"$tmp/cli.err"
check "embed: CLS pooling of 4 tokens ([CLS] hello world [SEP])" \
  test "$(jq -r '[.pooling, .n_tokens, .n_embd, (.embedding | length)] | join(" ")' "$tmp/cli.json")" = "cls 4 64 64"
jq '.embedding' "$tmp/cli.json" >"$tmp/cli_v.json"
check "embed: norm 1" test "$(py 'abs(norm(a) - 1) < 1e-5' "$tmp/cli_v.json")" = True
"$rocmforge" embed -m "$model" -p "the cat sat" | jq '.embedding' >"$tmp/cli_v2.json"
check "embed: another text, another vector" test "$(py 'maxdiff(a, b) > 1e-3' "$tmp/cli_v.json" "$tmp/cli_v2.json")" = True

"$rocmforge" mkmodel --shape tiny-bert --type F16 --vocab "$model" -o "$tmp/mk.gguf" --seed 7 >/dev/null 2>&1
"$rocmforge" embed -m "$tmp/mk.gguf" -p "Hello world" >"$tmp/mk.json" 2>/dev/null
check "mkmodel tiny-bert with the bert vocab embeds (128 floats, norm 1)" \
  test "$(jq -r '[.n_tokens, (.embedding | length), ((.embedding | map(. * .) | add | sqrt) - 1 | fabs < 1e-5)] | join(" ")' "$tmp/mk.json")" = "4 128 true"

if "$rocmforge" generate -m "$model" -p "hello" -n 2 >/dev/null 2>"$tmp/gen.err"; then fail "generate from an encoder succeeded"
else check "generate from an encoder is refused by name" grep -q "embedding model" "$tmp/gen.err"; fi

start_server main --parallel 2
curl -s --max-time 20 "$URL/v1/embeddings" -H 'Content-Type: application/json' \
  -d '{"input":["Hello world","the cat sat"],"model":"m"}' >"$tmp/srv.json"
check "server: two embeddings of 64" test "$(jq -r '[(.data | length), (.data[0].embedding | length)] | join(" ")' "$tmp/srv.json")" = "2 64"
jq '.data[0].embedding' "$tmp/srv.json" >"$tmp/srv_v.json"
jq '.data[1].embedding' "$tmp/srv.json" >"$tmp/srv_v2.json"
check "server = CLI, batched inputs as alone ($(py 'max(maxdiff(a, b), maxdiff(c, d))' "$tmp/srv_v.json" "$tmp/cli_v.json" "$tmp/srv_v2.json" "$tmp/cli_v2.json"))" \
  test "$(py 'max(maxdiff(a, b), maxdiff(c, d)) < 1e-5' "$tmp/srv_v.json" "$tmp/cli_v.json" "$tmp/srv_v2.json" "$tmp/cli_v2.json")" = True
code=$(curl -s --max-time 20 -o "$tmp/compl.json" -w '%{http_code}' "$URL/v1/completions" -H 'Content-Type: application/json' \
  -d '{"prompt":"Hello","max_tokens":4}')
check "server: completions from an encoder are a 400 naming it ($code)" \
  test "$code" = 400 -a "$(jq -r '.error.param' "$tmp/compl.json")" = model
stop_server main
finish encoder-cli
