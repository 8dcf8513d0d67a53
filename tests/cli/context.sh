#!/usr/bin/env bash
# The KV cache size (-c) against the model's trained context: the default model was trained at
# 512 tokens, so generate and perplexity default to 512, say so, and warn when -c asks for more;
# the size printed is the -c in force.
# Usage: context.sh ROCMFORGE_EXE MODEL TEXT_FILE
set -u
exe=$1
model=$2
text=$3
. "$(dirname "$0")/lib.sh"

expect 0 "^KV cache: 512 tokens" -- "$exe" generate -m "$model" -p "In the beginning" -n 2 --seed 1
expect 0 "trained context 512" -- "$exe" generate -m "$model" -p "In the beginning" -n 2 --seed 1
expect 0 "warning: -c 1024 is more than the 512 tokens this model was trained on" -- \
  "$exe" generate -m "$model" -p "In the beginning" -n 2 --seed 1 -c 1024
# -n -1 stops at the trained context, not 4096 tokens later.
"$exe" generate -m "$model" -p "And" -n -1 --ignore-eos --seed 1 >/dev/null 2>"$tmp/full.err"
grep -qE "^generation: .* / +511 tokens" "$tmp/full.err" || fail "generate -n -1: $(grep -E 'generation|stopped' "$tmp/full.err")"
# Below the trained context, no warning.
"$exe" generate -m "$model" -p "And" -n 2 --seed 1 -c 256 >/dev/null 2>"$tmp/small.err"
grep -q "warning" "$tmp/small.err" && fail "generate -c 256 warns: $(grep warning "$tmp/small.err")"
# The size printed is -c, also when parallel sequences get spare pages.
expect 0 "^KV cache: 256 tokens \(23 pages of 16\)" -- \
  "$exe" generate -m "$model" -p a -p b -p c -p d -p e -p f -p g -p h -n 1 --seed 1 -c 256

expect 0 "warning: -c 1024 is more than the 512 tokens" -- "$exe" perplexity -m "$model" -f "$text" -c 1024 --chunks 1
expect 0 "n_ctx=512" -- "$exe" perplexity -m "$model" -f "$text" --chunks 1

finish "context"
