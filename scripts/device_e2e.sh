#!/usr/bin/env bash
# End-to-end run on the GPU machine from a prebuilt dist/ folder (see scripts/make_dist.sh).
# Writes logs under $OUT. Usage: scripts/device_e2e.sh [quick]
set -u
D=${DIST:-dist}
RF=$D/tools/rocmforge
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" /tmp/m
V=tests/data/vocab/ggml-vocab-llama-spm.gguf
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
$RF info 2>&1 | tee "$OUT/info.txt"

# Models (random weights, seeded).
for spec in "tiny f16" "tiny q8_0" "tiny Q4_K_M" "tinyllama-1.1b Q4_K_M" "tinyllama-1.1b f16" "tinyllama-1.1b q8_0"; do
  set -- $spec
  $RF mkmodel --shape $1 --type $2 --vocab $V -o /tmp/m/$1-$2.gguf --seed 7 -t 16 >/dev/null 2>&1 || log "mkmodel $spec FAILED"
done
[ "${1:-}" = quick ] || $RF mkmodel --shape llama2-7b --type Q4_K_M --vocab $V -o /tmp/m/llama2-7b-Q4_K_M.gguf --seed 7 -t 16 >/dev/null 2>&1

cat docs/*.md README.md > /tmp/text.txt
# Perplexity and greedy tokens: GPU vs CPU.
for m in tiny-f16 tiny-q8_0 tiny-Q4_K_M tinyllama-1.1b-f16 tinyllama-1.1b-q8_0 tinyllama-1.1b-Q4_K_M; do
  for b in cpu hip; do
    t0=$(date +%s.%N)
    ppl=$(timeout 120 $RF perplexity -m /tmp/m/$m.gguf -f /tmp/text.txt -c 128 --chunks 8 --backend $b -t 16 2>&1 | grep "Final estimate")
    log "ppl $m $b: $ppl "
    timeout 120 $RF generate -m /tmp/m/$m.gguf -p "The quick brown fox" -n 24 --temp 0 --backend $b -t 16 2>/dev/null > "$OUT/gen-$m-$b.txt"
  done
  if cmp -s "$OUT/gen-$m-cpu.txt" "$OUT/gen-$m-hip.txt"; then log "greedy $m: identical"; else log "greedy $m: DIFFER"; fi
done

# Speed.
for m in tinyllama-1.1b-Q4_K_M llama2-7b-Q4_K_M; do
  [ -f /tmp/m/$m.gguf ] || continue
  timeout 200 $RF bench -m /tmp/m/$m.gguf -p 512 -n 128 -r 3 --backend hip -o md 2>&1 | tee -a "$OUT/bench.md" | tail -3
done
cat "$OUT/summary.txt"
