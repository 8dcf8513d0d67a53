#!/usr/bin/env bash
# The full GPU check on the H100 from a prebuilt dist/ (scripts/make_dist.sh): op validation,
# GPU-vs-CPU perplexity and greedy tokens, speed with baselines, A/B, profiler and its overhead.
# Logs -> $OUT (summary.txt, logs.tgz, baseline-h100-*.json, ab-hip-cpu.svg).
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
$RF quantize models/trained/kjv-f16.gguf /tmp/m/kjv-q4_k_m.gguf Q4_K_M > "$L/quantize.txt" 2>&1 || log "quantize FAILED"

log "== perplexity GPU vs CPU (-c 128; KJV 64 chunks, random-weight TinyLlama 8 chunks)"
scripts/device_ppl_ab.sh 64 /tmp/m/kjv-f16.gguf /tmp/m/kjv-q8_0.gguf /tmp/m/kjv-q4_k_m.gguf | tee -a "$S"
scripts/device_ppl_ab.sh 8 /tmp/m/tinyllama-1.1b-f16.gguf /tmp/m/tinyllama-1.1b-q8_0.gguf /tmp/m/tinyllama-1.1b-Q4_K_M.gguf | tee -a "$S"
log "== random-weight sensitivity: one op moved to the CPU (TinyLlama q8_0, 4 chunks)"
scripts/device_ppl_diag.sh /tmp/m/tinyllama-1.1b-q8_0.gguf 4 | tee -a "$S"

log "== greedy tokens GPU vs CPU (32 tokens)"
for m in kjv-f16 kjv-q8_0 kjv-q4_k_m tinyllama-1.1b-f16 tinyllama-1.1b-q8_0 tinyllama-1.1b-Q4_K_M; do
  for b in cpu hip; do
    timeout 120 $RF generate -m /tmp/m/$m.gguf -p "In the beginning" -n 32 --temp 0 --backend $b -t 16 2>/dev/null > "$L/gen-$m-$b.txt"
  done
  cmp -s "$L/gen-$m-cpu.txt" "$L/gen-$m-hip.txt" && log "greedy $m: identical tokens" || log "greedy $m: DIFFER"
done

log "== decode fusions keep the arithmetic: greedy tokens with all fusions vs none (hip.fuse=false) (64 tokens)"
for m in tinyllama-1.1b-q8_0 tinyllama-1.1b-Q4_K_M llama2-7b-Q4_K_M llama2-7b-Q4_0; do
  timeout 120 $RF generate -m /tmp/m/$m.gguf -p "In the beginning" -n 64 --temp 0 --backend hip 2>/dev/null > "$L/fuse-$m-all.txt"
  timeout 120 $RF generate -m /tmp/m/$m.gguf -p "In the beginning" -n 64 --temp 0 --backend hip --backend-option hip.fuse=false 2>/dev/null > "$L/fuse-$m-norm.txt"
  cmp -s "$L/fuse-$m-all.txt" "$L/fuse-$m-norm.txt" && log "fusion $m: identical tokens" || log "fusion $m: DIFFER"
done

log "== bench (hip)"
for m in tinyllama-1.1b-Q4_K_M llama2-7b-Q4_K_M llama2-7b-Q4_0; do
  timeout 240 $RF bench -m /tmp/m/$m.gguf -p 512 -n 128 -r 5 --backend hip --save-baseline "$OUT/baseline-h100-$m.json" 2>>"$L/bench.err" | tee -a "$L/bench.md" | tail -2 | tee -a "$S"
done
timeout 200 $RF bench -m /tmp/m/tinyllama-1.1b-Q4_K_M.gguf -p 512 -n 128 -r 3 --backend hip --compare-baseline "$OUT/baseline-h100-tinyllama-1.1b-Q4_K_M.json" > "$L/compare.txt" 2>&1; log "compare against own baseline rc=$?"

log "== profiler overhead on decode and token identity (scripts/device_perf.sh profov: tg128 with and without --profile, interleaved)"
DIST=$D OUT=$L/profov scripts/device_perf.sh profov > "$L/profov.txt" 2>&1 || log "profov: greedy tokens DIFFER with --profile"
sed '1,/^=================== summary$/d' "$L/profov.txt" | tee -a "$S"

log "== profile (hip, TinyLlama Q4_K_M, 64 decode tokens)"
timeout 200 $RF generate -m /tmp/m/tinyllama-1.1b-Q4_K_M.gguf -p "Hello" -n 64 --temp 0 --backend hip --profile "$OUT/trace-h100.json" > /dev/null 2> "$L/profile.txt"; log "profile rc=$?"
timeout 200 $RF generate -m /tmp/m/tinyllama-1.1b-Q4_K_M.gguf -p "Hello" -n 64 --temp 0 --backend hip --profile-every 32 > /dev/null 2> "$L/profile-every32.txt"
grep -A8 "^phase " "$L/profile.txt" | tee -a "$S"
grep -A8 "^phase " "$L/profile-every32.txt" | tee -a "$S"

log "== ab hip vs cpu (TinyLlama Q4_K_M)"
timeout 200 $RF ab -m /tmp/m/tinyllama-1.1b-Q4_K_M.gguf --backend hip --backend cpu -p 64 -n 16 -r 3 -t 16 --svg "$OUT/ab-hip-cpu.svg" > "$L/ab.txt" 2>&1; log "ab rc=$?"; tail -8 "$L/ab.txt" | tee -a "$S"

log "== per-kernel decode profile (ncu, TinyLlama Q4_K_M)"
timeout 300 $(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1) --clock-control none \
  --cache-control none --metrics gpu__time_duration.sum --csv \
  $RF generate -m /tmp/m/tinyllama-1.1b-Q4_K_M.gguf -p "Hello" -n 4 --temp 0 --backend hip --backend-option hip.graphs=false > "$L/kprof.csv" 2> "$L/kprof.err"
python3 scripts/kernel_profile_summary.py "$L/kprof.csv" | head -14 | tee -a "$S"

tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$L"
