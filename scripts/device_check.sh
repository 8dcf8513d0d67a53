#!/usr/bin/env bash
# Quick GPU check from a prebuilt dist/ (scripts/make_dist.sh): op validation, GPU-vs-CPU
# perplexity and greedy tokens on TinyLlama-shaped models, decode/prefill speed, and a
# per-kernel decode profile. Logs -> $OUT. Usage: scripts/device_check.sh [opcheck|ppl|bench|kprof]...
set -u
D=${DIST:-dist}
RF=$D/tools/rocmforge
OUT=${OUT:-/tmp/out}
mkdir -p /tmp/m
V=tests/data/vocab/ggml-vocab-llama-spm.gguf
S=$OUT/summary.txt
log() { echo "$*" | tee -a "$S"; }
steps=${*:-opcheck ppl bench kprof}
model() { # shape type -> path (made once)
  local f=/tmp/m/$1-$2.gguf
  [ -f "$f" ] || $RF mkmodel --shape $1 --type $2 --vocab $V -o "$f" --seed 7 -t 16 > /dev/null 2>&1 || log "mkmodel $1 $2 FAILED"
  echo "$f"
}
for step in $steps; do
  case $step in
  opcheck)
    timeout 300 $D/tests/hip/rocmforge-opcheck > "$OUT/opcheck.txt" 2>&1
    log "opcheck rc=$? $(tail -1 "$OUT/opcheck.txt")"; grep -E "FAIL" "$OUT/opcheck.txt" | head -20 | tee -a "$S" ;;
  ppl)
    cp models/trained/kjv-q8_0.gguf /tmp/m/
    for m in $(model tinyllama-1.1b f16) $(model tinyllama-1.1b q8_0) $(model tinyllama-1.1b Q4_K_M) /tmp/m/kjv-q8_0.gguf; do
      for b in cpu hip; do
        p=$(timeout 200 $RF perplexity -m $m -f models/trained/heldout.txt -c 128 --chunks 8 --backend $b -t 16 2>&1 | grep "Final estimate")
        log "ppl $(basename $m) $b: $p"
        timeout 120 $RF generate -m $m -p "In the beginning" -n 32 --temp 0 --backend $b -t 16 2>/dev/null > "$OUT/gen-$b.txt"
      done
      cmp -s "$OUT/gen-cpu.txt" "$OUT/gen-hip.txt" && log "greedy $(basename $m): identical" || log "greedy $(basename $m): DIFFER"
    done ;;
  bench)
    for m in $(model tinyllama-1.1b Q4_K_M) $(model llama2-7b Q4_K_M); do
      timeout 240 $RF bench -m $m -p 512 -n 128 -r 3 --backend hip 2>>"$OUT/bench.err" | tail -2 | tee -a "$S"
    done ;;
  kprof)
    timeout 300 $(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1) --clock-control none \
      --cache-control none --metrics gpu__time_duration.sum --csv \
      $RF generate -m $(model tinyllama-1.1b Q4_K_M) -p "Hello" -n 4 --temp 0 --backend hip --backend-option hip.graphs=false > "$OUT/kprof.csv" 2> "$OUT/kprof.err"
    python3 scripts/kernel_profile_summary.py "$OUT/kprof.csv" | tee "$OUT/kprof.txt" | head -16 | tee -a "$S" ;;
  esac
done
