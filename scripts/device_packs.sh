#!/usr/bin/env bash
# GPU checks of the kernel pack plugins from a prebuilt dist/ (scripts/make_dist.sh): the sm_90 pack
# loads and carries every base kernel (info, full opcheck), the example pack's fusion is claimed and
# matches the CPU backend on the device, wrong packs are refused at init, greedy tokens are unchanged
# with the pack loaded, with the fusions off and with the example pack, and without any pack the
# JIT fallback runs and `info` says why. Run from the repository root (the shipped model). Exits 1
# when a check fails. Logs -> $OUT (default /tmp/out).
set -u
D=${DIST:-dist}
RF=$D/tools/rocmforge
OC=$D/tests/hip/rocmforge-opcheck
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
EX=$(cd "$D" && pwd)/examples/rocmforge-pack-example-sm_90.so
export ROCMFORGE_CACHE_DIR=/tmp/rocmforge-jit-cache  # info (below) compiles once; generate reuses it
fails=0
check() { # NAME PATTERN FILE: FILE holds a line matching PATTERN
  if grep -qE -- "$2" "$3"; then echo "ok: $1"; else echo "FAIL: $1 (no '$2' in $3)"; tail -5 "$3"; fails=$((fails + 1)); fi
}
$RF info > "$OUT/info.txt" 2>&1
check "info: sm_90 pack carries the base kernels" "pack .*rocmforge-pack-sm_90.so .*sha256 verified" "$OUT/info.txt"
timeout 300 $OC > "$OUT/opcheck.txt" 2>&1
check "opcheck with the sm_90 pack" " 0 failed" "$OUT/opcheck.txt"
$OC --option stats=true --filter 'mul+add' --gpu-config "{\"packs\": [\"$EX\"]}" > "$OUT/opcheck-example.txt" 2>&1
check "example pack: mul+add cases pass" " 0 failed" "$OUT/opcheck-example.txt"
check "example pack: its fusion ran" "[1-9][0-9]* pack fusion claims" "$OUT/opcheck-example.txt"
$OC --filter fused --gpu-config "{\"packs\": [\"$EX\"]}" > "$OUT/opcheck-example-fused.txt" 2>&1
check "example pack: built-in fusion cases still pass" " 0 failed" "$OUT/opcheck-example-fused.txt"
$OC --filter 'mul+add' --gpu-config "{\"packs\": [\"$EX\"], \"arch_override\": \"sm_80\", \"jit\": \"off\"}" > "$OUT/wrong-arch.txt" 2>&1
check "a pack for another arch is refused at init" "built for arch 'sm_90' but the device needs 'sm_80'" "$OUT/wrong-arch.txt"
$OC --filter 'mul+add' --gpu-config '{"kernel_pack_dirs": ["/nonexistent"], "jit": "off"}' > "$OUT/no-pack.txt" 2>&1
check "no pack and jit off: init fails saying what was looked for" "looked for rocmforge-pack-sm_90.so in \[/nonexistent\]" "$OUT/no-pack.txt"
printf '{"backend_options": {"hip": {"kernel_pack_dirs": ["/nonexistent"]}}}\n' > "$OUT/no-pack.json"
$RF info --config "$OUT/no-pack.json" > "$OUT/info-jit.txt" 2>&1
check "no pack: info says JIT and why" "JIT \(looked for rocmforge-pack-sm_90.so" "$OUT/info-jit.txt"
printf '{"backend_options": {"hip": {"packs": ["%s"]}}}\n' "$EX" > "$OUT/example.json"
gen() { timeout 300 $RF generate -m models/trained/kjv-q8_0.gguf -n 48 --temp 0 -p "In the beginning" "$@" 2>/dev/null | md5sum | cut -c1-16; }
base=$(gen) cpu=$(gen --backend cpu) nofuse=$(gen --backend-option hip.fuse=false) jit=$(gen --config "$OUT/no-pack.json") ex=$(gen --config "$OUT/example.json")
echo "greedy md5: pack $base, cpu $cpu, fusions off $nofuse, jit $jit, example pack $ex" | tee "$OUT/greedy.txt"
[ "$base" = "$nofuse" ] && [ "$base" = "$jit" ] && [ "$base" = "$ex" ] && echo "ok: greedy tokens identical (pack, no fusion, JIT, example pack)" ||
  { echo "FAIL: greedy tokens differ"; fails=$((fails + 1)); }
[ "$fails" = 0 ] && echo "device pack checks: all passed" || { echo "$fails device pack check(s) failed"; exit 1; }
