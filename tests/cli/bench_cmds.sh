#!/usr/bin/env bash
# The inference and memory benchmarks run end to end on the default model and print every row
# they promise; bad options are refused. Checks output shape and arithmetic, never speed.
# Usage: bench_cmds.sh ROCMFORGE_EXE MODEL
set -u
exe=$1
model=$2
. "$(dirname "$0")/lib.sh"

# bench-inference: one TTFT row per prompt length, one generation row per batch size.
if "$exe" bench-inference -m "$model" --prompts 16,64 --batches 1,3 -n 8 -r 2 -t 1 \
     --save-baseline "$tmp/inf.json" >"$tmp/inf.md" 2>"$tmp/inf.err"; then
  for row in "ttft .*prompt=16 " "ttft .*prompt=64 " "generation .*batch=1 " "generation .*batch=3 "; do
    grep -qE "^\| $row" "$tmp/inf.md" || fail "bench-inference: no row matching '$row'"
  done
  [ "$(grep -c '^| ttft ' "$tmp/inf.md")" = 2 ] || fail "bench-inference: want 2 ttft rows"
  grep -q '"ttft"' "$tmp/inf.json" || fail "bench-inference: baseline lacks the ttft results"
  # Comparing a run with its own baseline at a generous threshold: exit 0 or 1, never an error.
  "$exe" bench-inference -m "$model" --prompts 16 --batches 1 -n 4 -r 1 -t 1 --compare-baseline "$tmp/inf.json" \
    --threshold 1000% >/dev/null 2>"$tmp/cmp.err"
  [ $? -le 1 ] || fail "bench-inference --compare-baseline: $(tail -1 "$tmp/cmp.err")"
else
  fail "bench-inference exited $?: $(tail -3 "$tmp/inf.err")"
fi

# bench-inference batched rows in llama-batched-bench's columns: PP TG B N_KV ... with
# N_KV = B*(PP+TG); without --prompt-len, PP is 0 and S_PP is "-".
grep -q '^|    PP |     TG |    B |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |      T s |    S t/s |$' "$tmp/inf.md" ||
  fail "bench-inference: no llama-batched-bench table header"
grep -qE '^\|     0 \|      8 \|    3 \|     24 \| +[0-9.]+ \| +- \|' "$tmp/inf.md" || fail "bench-inference: no PP=0 TG=8 B=3 N_KV=24 row"
if "$exe" bench-inference -m "$model" --prompts 0 --batches 1,2 --prompt-len 20 -n 4 -r 1 -b 16 -t 1 \
     >"$tmp/pl.md" 2>"$tmp/pl.err"; then
  # Prompts of 2 x 20 tokens go through -b 16 chunks; N_KV = 2*(20+4) = 48.
  grep -qE '^\|    20 \|      4 \|    1 \|     24 \|' "$tmp/pl.md" || fail "bench-inference --prompt-len: no B=1 row with N_KV 24"
  grep -qE '^\|    20 \|      4 \|    2 \|     48 \|' "$tmp/pl.md" || fail "bench-inference --prompt-len: no B=2 row with N_KV 48"
  [ "$(grep -cE '^\| batched_prefill .*prompt_len=20 ' "$tmp/pl.md")" = 2 ] || fail "bench-inference --prompt-len: want 2 batched_prefill rows"
  grep -qE '^\| generation .*batch=2 .*prompt_len=20 ' "$tmp/pl.md" || fail "bench-inference --prompt-len: generation rows lack prompt_len"
  # S_TG of the table is the generation result; S = N_KV / T.
  awk -F'|' '$2+0 == 20 && $4+0 == 2 { tg = $9 + 0; s = $11 + 0; t = $10 + 0; n_kv = $5 + 0 }
             /^\| generation .*batch=2 / { gen = $4 + 0 }
             END { if (tg <= 0 || (tg - gen) / gen > 0.001 || (gen - tg) / gen > 0.001) { print "S_TG " tg " vs generation " gen; exit 1 }
                   # T is printed to 1 ms: N_KV must lie within S * (T +- 0.5 ms).
                   if (s <= 0 || n_kv < s * (t - 0.0005) * 0.999 || n_kv > s * (t + 0.0005) * 1.001) { print "S " s " vs N_KV " n_kv " / T " t; exit 1 } }' \
    "$tmp/pl.md" >"$tmp/awk.out" || fail "bench-inference --prompt-len: $(cat "$tmp/awk.out")"
else
  fail "bench-inference --prompt-len exited $?: $(tail -3 "$tmp/pl.err")"
fi

# bench: comma lists and depths give one test per value and depth, in llama-bench's order.
if "$exe" bench -m "$model" -p 16,32 -n 0,8 -d 0,24 -r 1 -t 1 -c 8 >"$tmp/bench.md" 2>"$tmp/bench.err"; then
  tests=$(awk -F'|' 'NR > 2 { gsub(/^ +| +$/, "", $8); printf "%s;", $8 }' "$tmp/bench.md")
  [ "$tests" = "pp16;pp32;tg8;pp16 @ d24;pp32 @ d24;tg8 @ d24;" ] || fail "bench -d: tests are '$tests'"
  # -c 8 is raised to the largest depth + test: 24 + 32 = 56 tokens (4 pages of 16).
  grep -q "KV cache: 56 tokens (4 pages of 16)" "$tmp/bench.err" || fail "bench -d: context not raised: $(grep 'KV cache' "$tmp/bench.err")"
else
  fail "bench -d exited $?: $(tail -3 "$tmp/bench.err")"
fi
"$exe" bench -m "$model" -p 8 -n 4 -d 16 -r 1 -t 1 -o csv >"$tmp/bench.csv" 2>/dev/null || fail "bench -o csv exited $?"
head -1 "$tmp/bench.csv" | grep -q ',n_gen,n_depth,test,' || fail "bench csv: no n_depth column"
grep -q ',0,4,16,"tg4 @ d16",' "$tmp/bench.csv" || fail "bench csv: no tg4 @ d16 row with n_depth 16"
"$exe" bench -m "$model" -p 8 -n 0 -d 16 -r 1 -t 1 -o json >"$tmp/bench.json" 2>/dev/null || fail "bench -o json exited $?"
grep -q '"n_depth": 16,' "$tmp/bench.json" && grep -q '"test": "pp8 @ d16"' "$tmp/bench.json" || fail "bench json: no n_depth / depth test name"
# Baselines key by the whole test name: depth-0 tests keep the names of older files ("pp16").
if "$exe" bench -m "$model" -p 16 -n 4 -r 1 -t 1 --save-baseline "$tmp/bench_base.json" >/dev/null 2>&1; then
  grep -q '"name": "pp16"' "$tmp/bench_base.json" || fail "bench baseline: no pp16 result"
  "$exe" bench -m "$model" -p 16 -n 4 -d 0,8 -r 1 -t 1 --compare-baseline "$tmp/bench_base.json" --threshold 1000% \
    >/dev/null 2>"$tmp/bcmp.err"
  [ $? -le 1 ] || fail "bench --compare-baseline: $(tail -1 "$tmp/bcmp.err")"
  grep -qE '^  (same|improved|REGRESSED) +pp16\[' "$tmp/bcmp.err" || fail "bench baseline: pp16 not compared"
  grep -qE '^  new +tg4 @ d8\[' "$tmp/bcmp.err" || fail "bench baseline: tg4 @ d8 not reported as new"
else
  fail "bench --save-baseline exited $?"
fi

# Bad list and depth values are usage errors (exit 2) naming the option.
expect 2 "option -d must be in 0.." -- "$exe" bench -m "$model" -d -1
expect 2 "option -p has an empty item in '1,,2'" -- "$exe" bench -m "$model" -p 1,,2
expect 2 "option -n has an empty item" -- "$exe" bench -m "$model" -n 4,
expect 2 "option --n-depth needs an integer" -- "$exe" bench -m "$model" --n-depth 1,x
expect 2 "nothing to measure" -- "$exe" bench -m "$model" -p 0,0 -n 0
# --shared-prefix: TTFT of a prefix served before + a question, prefix cache off and on.
if "$exe" bench-inference -m "$model" --prompts 0 --batches 0 --shared-prefix 100:10 -r 1 -t 1 >"$tmp/sp.md" 2>"$tmp/sp.err"; then
  for c in off on; do
    grep -qE "^\| ttft_shared_prefix .*prefix_cache=$c prompt=100 question=10 " "$tmp/sp.md" || fail "bench-inference --shared-prefix: no $c row"
  done
  grep -qE "^shared prefix 100 \+ 10 tokens: TTFT .* ms cached .*; 96 tokens a run from the cache\)" "$tmp/sp.err" ||
    fail "bench-inference --shared-prefix: no summary line with 96 cached tokens: $(grep 'shared prefix' "$tmp/sp.err")"
else
  fail "bench-inference --shared-prefix exited $?: $(tail -3 "$tmp/sp.err")"
fi
expect 2 "option --shared-prefix needs P:Q" -- "$exe" bench-inference -m "$model" --shared-prefix 100
expect 2 "option --prompt-len must be in 0.." -- "$exe" bench-inference -m "$model" --prompt-len -5
expect 2 "option --prompt-len needs an integer" -- "$exe" bench-inference -m "$model" --prompt-len 1,2

# bench-memory: KV bytes per token must equal the model's shape (4 layers, 2 KV heads of 32:
# f16 = 4 * 2 * 64 * 2 bytes = 1024), and the workload rows must be there.
if "$exe" bench-memory -m "$model" --requests 6 --parallel 3 --prompt-range 8:40 --gen-range 4:20 -c 256 -t 1 \
     >"$tmp/mem.md" 2>"$tmp/mem.err"; then
  grep -qE '^\| kv_bytes_per_token \| cache=f16/f16 .*\| 1024 \|' "$tmp/mem.md" || fail "bench-memory: f16 KV bytes per token is not 1024"
  grep -qE '^\| kv_bytes_per_token \| cache=q8_0/q8_0 .*\| 544 \|' "$tmp/mem.md" || fail "bench-memory: q8_0 KV bytes per token is not 544"
  for row in kv_pool_peak_pages kv_internal_fragmentation_mean kv_internal_fragmentation_max requests_deferred peak_allocated peak_host_rss; do
    grep -q "^| $row " "$tmp/mem.md" || fail "bench-memory: no $row row"
  done
  grep -q "workload: 6 requests" "$tmp/mem.err" || fail "bench-memory: no workload line"
else
  fail "bench-memory exited $?: $(tail -3 "$tmp/mem.err")"
fi
# --shared-prefix: every prompt starts with 32 shared tokens (2 pages): all but the first
# request take them from the cache; the cache's share of the pool is reported.
if "$exe" bench-memory -m "$model" --requests 6 --parallel 1 --prompt-range 40:60 --gen-range 4:8 --shared-prefix 32 -c 256 -t 1 \
    >"$tmp/spm.md" 2>"$tmp/spm.err"; then
  for row in kv_prefix_cache_peak_pages kv_prefix_cache_share_mean kv_prefix_cache_share_peak; do
    grep -qE "^\| $row \| .*shared_prefix=32 " "$tmp/spm.md" || fail "bench-memory --shared-prefix: no $row row"
  done
  grep -qE '^\| prefix_cache_tokens_served \| .*\| 160 \|' "$tmp/spm.md" || fail "bench-memory --shared-prefix: want 5 x 32 tokens served"
else
  fail "bench-memory --shared-prefix exited $?: $(tail -3 "$tmp/spm.err")"
fi
expect 2 "must be below the shortest prompt" -- "$exe" bench-memory -m "$model" --shared-prefix 40 --prompt-range 40:60
# A pool too small for one request is refused with the sizes named, exit 2.
"$exe" bench-memory -m "$model" --requests 2 --prompt-range 300:300 -c 128 -t 1 >/dev/null 2>"$tmp/small.err"
rc=$?
{ [ $rc = 2 ] && grep -q "does not fit the KV cache of 128" "$tmp/small.err"; } || fail "bench-memory small pool: exit $rc, $(tail -1 "$tmp/small.err")"
"$exe" bench-inference -m "$model" --prompts 1,x >/dev/null 2>"$tmp/bad.err"
rc=$?
{ [ $rc = 2 ] && grep -q "needs an integer" "$tmp/bad.err"; } || fail "bench-inference bad list: exit $rc"
"$exe" bench-memory -m "$model" --gen-range 9:3 >/dev/null 2>"$tmp/bad.err"
rc=$?
{ [ $rc = 2 ] && grep -q "9 > 3" "$tmp/bad.err"; } || fail "bench-memory bad range: exit $rc"

finish "bench command"
