#!/usr/bin/env bash
# Where do GPU and CPU perplexities part? Runs one model under several backend settings
# (graphs/fusion off, single ops moved to the CPU). Usage: device_ppl_diag.sh MODEL [chunks]
set -u
D=${DIST:-dist}; RF=$D/tools/rocmforge; M=$1; N=${2:-4}
ppl() { timeout 200 $RF perplexity -m $M -f models/trained/heldout.txt -c 128 --chunks $N -t 16 "$@" 2>&1 | grep -o "PPL = [0-9.]*"; }
cfg() { echo "{\"backends\": [\"hip\", \"cpu\"], \"op_overrides\": {$1}}" > /tmp/cfg.json; echo /tmp/cfg.json; }
echo "$(basename $M) cpu            $(ppl --backend cpu)"
echo "$(basename $M) hip            $(ppl --backend hip)"
echo "$(basename $M) hip graphs=0   $(ROCMFORGE_HIP_GRAPHS=0 ppl --backend hip)"
echo "$(basename $M) hip fuse=0     $(ROCMFORGE_HIP_FUSE=0 ppl --backend hip)"
echo "$(basename $M) hip sync       $(ROCMFORGE_HIP_SYNC=1 ppl --backend hip)"
for op in matmul attention get_rows rms_norm rope; do
  echo "$(basename $M) hip $op->cpu $(ppl --config $(cfg "\"$op\": \"cpu\""))"
done
