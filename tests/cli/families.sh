#!/usr/bin/env bash
# Each model family beyond llama end to end on the CPU backend: `mkmodel` writes a tiny
# random-weight file of the family (Q8_0 and F16 mixes; the mixture-of-experts ones too), `generate` loads it, names the
# architecture and streams the tokens asked for; the same seed gives the same text; the
# mixture-of-experts files' perplexity is the same on 1 and 2 threads. tiny-gpt-oss's Q8_0 file
# has MXFP4 experts, as the real ones.
# Usage: families.sh ROCMFORGE_EXE VOCAB.gguf
set -u
exe=$1
vocab=$2
. "$(dirname "$0")/lib.sh"

text="$tmp/heldout.txt"
head -c 3000 "$(dirname "$0")/../../models/trained/heldout.txt" >"$text"

# shape:architecture (tiny-mixtral is a llama file with experts)
for pair in qwen3:qwen3 gemma2:gemma2 gemma3:gemma3 phi3:phi3 mixtral:llama qwen3moe:qwen3moe qwen2moe:qwen2moe gpt-oss:gpt-oss deepseek2:deepseek2 qwen35:qwen35 qwen35moe:qwen35moe qwen3next:qwen3next; do
  shape=${pair%%:*}
  arch=${pair#*:}
  for mix in Q8_0 F16; do
    model="$tmp/tiny-$shape-$mix.gguf"
    expect 0 "mkmodel: [0-9]+ tensors" -- "$exe" mkmodel --shape "tiny-$shape" --type "$mix" --seed 3 \
      --vocab "$vocab" -o "$model" -t 2
    expect 0 "model: .*\($arch [0-9.]+[KM] $mix\)" -- "$exe" generate -m "$model" -p "Hello world" -n 12 --seed 5 -t 2
    "$exe" generate -m "$model" -p "Hello world" -n 12 --seed 5 -t 2 >"$tmp/a.txt" 2>"$tmp/a.err" || fail "$arch $mix: generate exited $?"
    "$exe" generate -m "$model" -p "Hello world" -n 12 --seed 5 -t 2 >"$tmp/b.txt" 2>/dev/null
    grep -qE "generation: .* 12 tokens" "$tmp/a.err" || fail "$arch $mix: not 12 tokens: $(grep generation "$tmp/a.err")"
    cmp -s "$tmp/a.txt" "$tmp/b.txt" || fail "$arch $mix: the same seed gave different text"
    # Mixture-of-experts results do not depend on the thread count (issue 53): a near tie in
    # the router must not flip with how the rows are split.
    if [ "$shape" = mixtral ] || [ "$shape" = qwen3moe ] || [ "$shape" = qwen2moe ] || [ "$shape" = gpt-oss ] || [ "$shape" = deepseek2 ] || [ "$shape" = qwen35moe ] || [ "$shape" = qwen3next ]; then
      for t in 1 2; do
        "$exe" perplexity -m "$model" -f "$text" -c 64 -t $t --backend cpu 2>/dev/null | grep "Final estimate" >"$tmp/ppl-$t.txt" ||
          fail "$arch $mix: perplexity -t $t failed"
      done
      cmp -s "$tmp/ppl-1.txt" "$tmp/ppl-2.txt" ||
        fail "$arch $mix: perplexity differs between 1 and 2 threads: $(cat "$tmp/ppl-1.txt") / $(cat "$tmp/ppl-2.txt")"
    fi
  done
done
# bench-memory on a hybrid model: K/V only for its one full-attention layer (2 KV heads of 64,
# f16: 512 bytes a token) and the DeltaNet layers' state per sequence (3 layers of (3 x 256) conv
# and 4 x 32 x 32 delta f32 values: 58368 bytes).
"$exe" bench-memory -m "$tmp/tiny-qwen35-Q8_0.gguf" --requests 4 --parallel 2 --prompt-range 8:40 --gen-range 4:20 -c 256 -t 1 >"$tmp/bm.txt" 2>/dev/null ||
  fail "qwen35: bench-memory exited $?"
grep -qE '^\| kv_bytes_per_token \| cache=f16/f16 [^|]*\| 512 ' "$tmp/bm.txt" || fail "qwen35: kv_bytes_per_token: $(grep kv_bytes "$tmp/bm.txt" | head -1)"
grep -qE '^\| recurrent_state_bytes_per_sequence \|[^|]*\| 58368 ' "$tmp/bm.txt" || fail "qwen35: recurrent state bytes: $(grep recurrent "$tmp/bm.txt")"
finish "model families"
