#!/usr/bin/env bash
# The inference and memory benchmarks run end to end on the default model and print every row
# they promise; bad options are refused. Checks output shape and arithmetic, never speed.
# Usage: bench_cmds.sh ROCMFORGE_EXE MODEL
set -u
exe=$1
model=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

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

[ "$fails" = 0 ] && echo "bench commands: all checks passed" || { echo "$fails bench command check(s) failed"; exit 1; }
