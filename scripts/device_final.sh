#!/usr/bin/env bash
# The full GPU check on the H100 from a prebuilt dist/ (scripts/make_dist.sh): op validation,
# GPU-vs-CPU perplexity and greedy tokens, speed with baselines, A/B, profiler. Logs -> $OUT.
set -u
D=${DIST:-dist}
RF=$D/tools/rocmforge
OUT=${OUT:-/tmp/out}
L=$OUT/logs
mkdir -p "$L" /tmp/m
V=tests/data/vocab/ggml-vocab-llama-spm.gguf
S=$OUT/summary.txt
log() { echo "$*" | tee -a "$S"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$L/gpu.txt"
$RF info > "$L/info.txt" 2>&1

log "== opcheck"
timeout 240 $D/tests/hip/rocmforge-opcheck > "$L/opcheck.txt" 2>&1; log "opcheck rc=$? $(tail -1 "$L/opcheck.txt")"

for spec in "tinyllama-1.1b f16" "tinyllama-1.1b q8_0" "tinyllama-1.1b Q4_K_M" "llama2-7b Q4_K_M" "llama2-7b Q4_0"; do
  set -- $spec
  $RF mkmodel --shape $1 --type $2 --vocab $V -o /tmp/m/$1-$2.gguf --seed 7 -t 16 > /dev/null 2>&1 || log "mkmodel $spec FAILED"
done
cp models/trained/kjv-f16.gguf models/trained/kjv-q8_0.gguf /tmp/m/

log "== perplexity and greedy tokens, GPU vs CPU (-c 128, 16 chunks)"
cat models/trained/heldout.txt > /tmp/held.txt
for m in kjv-f16 kjv-q8_0 tinyllama-1.1b-f16 tinyllama-1.1b-q8_0 tinyllama-1.1b-Q4_K_M; do
  for b in cpu hip; do
    p=$(timeout 200 $RF perplexity -m /tmp/m/$m.gguf -f /tmp/held.txt -c 128 --chunks 16 --backend $b -t 16 2>&1 | grep "Final estimate")
    log "ppl $m $b: $p"
    timeout 120 $RF generate -m /tmp/m/$m.gguf -p "In the beginning" -n 32 --temp 0 --backend $b -t 16 2>/dev/null > "$L/gen-$m-$b.txt"
  done
  cmp -s "$L/gen-$m-cpu.txt" "$L/gen-$m-hip.txt" && log "greedy $m: identical tokens" || log "greedy $m: DIFFER"
done

log "== bench (hip)"
for m in tinyllama-1.1b-Q4_K_M llama2-7b-Q4_K_M llama2-7b-Q4_0; do
  timeout 240 $RF bench -m /tmp/m/$m.gguf -p 512 -n 128 -r 5 --backend hip --save-baseline "$OUT/baseline-h100-$m.json" 2>>"$L/bench.err" | tee -a "$L/bench.md" | tail -2 | tee -a "$S"
done

log "== ab hip vs cpu (tinyllama Q4_K_M)"
timeout 200 $RF ab -m /tmp/m/tinyllama-1.1b-Q4_K_M.gguf --backend hip --backend cpu -p 64 -n 16 -r 3 -t 16 --svg "$OUT/ab-hip-cpu.svg" > "$L/ab.txt" 2>&1; log "ab rc=$?"; tail -15 "$L/ab.txt" | tee -a "$S"

log "== profile (hip, 7B Q4_K_M decode)"
timeout 200 $RF generate -m /tmp/m/llama2-7b-Q4_K_M.gguf -p "Hello" -n 32 --temp 0 --backend hip --profile "$OUT/trace-h100.json" > /dev/null 2> "$L/profile.txt"; log "profile rc=$?"
grep -A12 "per op and shape" "$L/profile.txt" | head -14 | tee -a "$S"

tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$L"
