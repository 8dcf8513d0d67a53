#!/usr/bin/env bash
# Where do GPU and CPU perplexities part? Runs one model under several backend settings
# (graphs/fusion off, single ops moved to the CPU). Usage: device_ppl_diag.sh MODEL [chunks]
set -u
D=${DIST:-dist}; RF=$D/tools/rocmforge; M=$1; N=${2:-4}
ppl() { timeout 200 $RF perplexity -m $M -f models/trained/heldout.txt -c 128 --chunks $N -t 16 "$@" 2>&1 | grep -o "PPL = [0-9.]*"; }
cfg() { echo "{\"backends\": [\"hip\", \"cpu\"], \"op_overrides\": {$1}}" > /tmp/cfg.json; echo /tmp/cfg.json; }
echo "$(basename $M) cpu            $(ppl --backend cpu)"
echo "$(basename $M) hip            $(ppl --backend hip)"
echo "$(basename $M) hip graphs=0   $(ppl --backend hip --backend-option hip.graphs=false)"
echo "$(basename $M) hip fuse=0     $(ppl --backend hip --backend-option hip.fuse=false)"
echo "$(basename $M) hip sync       $(ppl --backend hip --backend-option hip.sync_each_node=true)"
for op in matmul attention get_rows rms_norm rope; do
  echo "$(basename $M) hip $op->cpu $(ppl --config $(cfg "\"$op\": \"cpu\""))"
done
