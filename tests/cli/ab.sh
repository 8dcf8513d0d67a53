#!/usr/bin/env bash
# rocmforge ab on the CPU against itself: one profile report per side, no temporary trace left
# in the temp folder, the chart where --svg says (and --help says where it goes by default).
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

finish "ab"
