#!/usr/bin/env bash
# GPU-vs-CPU perplexity (the GPU's quantized matmuls see int8 activations quantized like the CPU
# backend's). Usage on the GPU machine:
#   device_ppl_ab.sh CHUNKS MODEL...
set -u
D=${DIST:-dist}; RF=$D/tools/rocmforge; N=$1; shift
ppl() { timeout 300 $RF perplexity -m $M -f models/trained/heldout.txt -c 128 --chunks $N -t 16 "$@" 2>&1 | grep -o "PPL = [0-9.]*" | cut -d' ' -f3; }
for M in "$@"; do
  c=$(ppl --backend cpu); g=$(ppl --backend hip)
  python3 -c "import sys; c,g=map(float,sys.argv[2:]); print(f'{sys.argv[1]:32s} cpu {c:.4f}  hip {g:.4f} ({100*(g-c)/c:+.3f}%)')" $(basename $M) $c $g
done
