#!/usr/bin/env bash
# rocmforge serve with a qwen35 file (mkmodel tiny-qwen35, random weights, the default model's
# vocabulary): the prefix cache is turned off with a note (a DeltaNet layer's state is not in
# the cached pages), and continuous batching keeps each sequence's recurrent state apart: greedy
# completions of three prompts sent at once over 2 slots equal each one sent alone, again after
# the slots were reused. Speculative decoding is refused in one line.
# Usage: serve_qwen35.sh ROCMFORGE MODEL
set -uo pipefail
rocmforge=$1 vocab_model=$2
source "$(dirname "$0")/lib_server.sh"
C=(curl -s --max-time 30)
complete() { "${C[@]}" "$URL/v1/completions" -H 'Content-Type: application/json' \
  -d "{\"prompt\":\"$1\",\"max_tokens\":64,\"temperature\":0}" | jq -r '.choices[0].text'; }

model=$tmp/qwen35.gguf
"$rocmforge" mkmodel --shape tiny-qwen35 --type Q8_0 --seed 1 --vocab "$vocab_model" -o "$model" -t 2 >"$tmp/mkmodel.log" 2>&1 ||
  { cat "$tmp/mkmodel.log"; echo "mkmodel tiny-qwen35 failed"; exit 1; }
start_server q35 --parallel 2 -t 2
check "the prefix cache is off, with the reason" grep -q "prefix cache off: qwen35 keeps recurrent state" "$tmp/q35.log"
check "the KV cache line names the recurrent state" grep -q "recurrent state: 3 layers" "$tmp/q35.log"
prompts=("The quick brown fox" "Hello world, this is a longer prompt than the others" "1 2 3")
for i in 0 1 2; do complete "${prompts[$i]}" >"$tmp/alone$i.txt"; done
for round in 1 2; do
  pids=()
  for i in 0 1 2; do complete "${prompts[$i]}" >"$tmp/together$i.txt" & pids+=($!); done
  wait "${pids[@]}" # not the server, also a job of this shell
  for i in 0 1 2; do
    check "round $round: prompt $i at once = alone" cmp -s "$tmp/alone$i.txt" "$tmp/together$i.txt"
  done
done
check "  and not all the same text" bash -c "! cmp -s '$tmp/alone0.txt' '$tmp/alone1.txt'"
stop_server q35
"$rocmforge" serve -m "$model" --port 0 --draft-ngram 3 >"$tmp/spec.log" 2>&1
check "speculative decoding refused (exit 2)" test $? = 2
check "  in one line naming it" grep -q "speculative decoding is not supported for qwen35" "$tmp/spec.log"
finish "serve qwen35"
