#!/usr/bin/env bash
# rocmforge ab on the CPU against itself: one profile report per side, no temporary trace left
# in the temp folder, the chart where --svg says (and --help says where it goes by default); sides
# that differ only in backend options.
# Usage: ab.sh ROCMFORGE_EXE MODEL
set -u
exe=$1
model=$2
. "$(dirname "$0")/lib.sh"

mkdir "$tmp/t"
if TMPDIR=$tmp/t "$exe" ab -m "$model" --backend cpu --backend cpu -p 8 -n 4 -r 1 -t 1 --svg "$tmp/chart.svg" \
     >"$tmp/ab.out" 2>"$tmp/ab.err"; then
  [ "$(grep -c '== ROCmForge profile ==' "$tmp/ab.err")" = 2 ] ||
    fail "ab: want 2 profile reports, got $(grep -c '== ROCmForge profile ==' "$tmp/ab.err")"
  left=$(ls "$tmp/t")
  [ -z "$left" ] || fail "ab left temporary files: $left"
  grep -q '<svg' "$tmp/chart.svg" || fail "ab: no chart at --svg"
  grep -q "^chart: $tmp/chart.svg" "$tmp/ab.out" || fail "ab: the chart's path is not printed"
  grep -q "^| matmul |" "$tmp/ab.out" || fail "ab: no per-op row for matmul"
else
  fail "ab exited $?: $(tail -3 "$tmp/ab.err")"
fi
expect 0 "--svg FILE .*default: ab.svg in the current folder" -- "$exe" ab --help

# Sides told apart by backend options alone: each side's own, over the options of both.
expect 0 "^  B: --backend cpu cpu.simd=scalar -> cpu" -- "$exe" ab -m "$model" --backend cpu --backend-option cpu.weights=copy \
  --backend-option-b cpu.simd=scalar -p 4 -n 2 -r 1 -t 1 --no-profile
expect 0 "^  A: --backend cpu cpu.simd=scalar -> cpu" -- "$exe" ab -m "$model" --backend cpu --backend-option-a cpu.simd=scalar \
  --backend-option-b cpu.simd=auto -p 4 -n 2 -r 1 -t 1 --no-profile
expect 2 "ab: the two sides are the same" -- "$exe" ab -m "$model" --backend cpu --backend-option cpu.simd=scalar
expect 2 "ab: the two sides are the same" -- "$exe" ab -m "$model" --backend-option-a cpu.simd=scalar --backend-option-b cpu.simd=scalar
expect 2 "--backend-option-b 'cpu.simd' has no '='" -- "$exe" ab -m "$model" --backend-option-b cpu.simd
expect 2 "--backend-option-a cpu.simd=avx9: backend_options.cpu.simd is \"avx9\"" -- \
  "$exe" ab -m "$model" --backend cpu --backend-option-a cpu.simd=avx9 --backend-option-b cpu.simd=auto --no-profile
expect 2 "at most twice each" -- "$exe" ab -m "$model" --backend cpu --backend cpu --backend cpu

finish "ab"
