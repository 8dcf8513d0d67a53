#!/usr/bin/env bash
# rocmforge-pack-check through the config: the example pack (examples/pack) claims its pattern
# and matches the CPU backend; packs for another arch, missing files, wrong bindings and a
# host_run that does not compute what the nodes do are refused.
# Usage: pack_check.sh PACK_CHECK EXAMPLE_PACK FAKE_PACK_DIR CPU_PLUGIN_DIR ROCMFORGE
set -u
check=$1 example=$2 fakes=$3 cpu=$4 rocmforge=$5
source "$(dirname "$0")/../cli/lib.sh"

config() { # PACKS_JSON_ARRAY -> a config file naming them (and no pack folder) for the HIP backend
  local f=$tmp/config-$RANDOM.json
  printf '{"plugin_dirs": ["%s"], "backend_options": {"hip": {"packs": %s, "kernel_pack_dirs": ["%s"], "arch_override": "sm_90"}}}\n' \
    "$cpu" "$1" "$tmp/no-packs" >"$f"
  echo "$f"
}
mkdir -p "$tmp/no-packs"

# The mul+add cases (four of the graphs) are claimed, every node equals the CPU backend's.
expect 0 "4 claim\(s\), 0 unchecked, 0 failure" -- "$check" --config "$(config "[\"$example\"]")" --expect-claims 4
expect 0 "fusions: example_mul_add" -- "$check" --config "$(config "[\"$example\"]")"
expect 1 "expected 5 claim" -- "$check" --config "$(config "[\"$example\"]")" --expect-claims 5
# Refused at load, naming both sides.
expect 1 "built for arch 'sm_90' but the device needs 'gfx1100'" -- "$check" --config "$(config "[\"$example\"]")" --arch gfx1100
expect 1 "absent.so \(from the config's \"packs\"\) does not exist" -- "$check" --config "$(config "[\"$tmp/absent.so\"]")"
expect 1 "ABI version 1.0 does not match" -- "$check" --config "$(config "[\"$fakes/fake-pack-abi1.so\"]")"
expect 1 "checksum mismatch" -- "$check" --config "$(config "[\"$fakes/fake-pack-badsum.so\"]")"
# Claims the check must reject.
expect 1 "FAIL node 0 \(mul\)" -- "$check" --config "$(config "[\"$fakes/fake-pack-hostnoop.so\"]")"
expect 1 "src\[4\] binds node \+0 src3, which the node does not have" -- "$check" --config "$(config "[\"$fakes/fake-pack-badbind.so\"]")"
expect 1 "cannot be checked without a GPU" -- "$check" --config "$(config "[\"$fakes/rocmforge-pack-fake-sm_90.so\"]")"
# The example first: its claims win over the fake's (load order = claim order); the fake still
# claims the mul+add of other tensors, which the example declines, and cannot be checked there.
expect 1 "5 claim\(s\), 1 unchecked, 0 failure" -- "$check" --config "$(config "[\"$example\", \"$fakes/rocmforge-pack-fake-sm_90.so\"]")"
# ROCmForge's own sm_90 pack (where this build has one, found in its default folder): the fused
# norm claims the six [ADD] RMS_NORM MUL cases (one with each kernel), writing the q8_1 columns
# where they are lent; swiglu_q8 the two SWIGLU-before-a-matmul cases with K % 32 == 0; kv_append
# the two K/V append cases (bit for bit); projections the five cases of a layer's projections with
# appends (outputs, pools and slots by address); gate_up_swiglu eleven gate/up cases and matmul_rope six
# matmul + rope cases (their matmul inputs lent as q8_1 columns or f32 rows, ABI 2.6; the grid
# i-quants' among them);
# moe_gate_up and moe_down_sum the seven expert cases of at most 64 columns with fewer than 4 slots
# for the down+sum; head_norm_rope the three cases of a layer's head norms with their ropes (the
# fourth, with two eps, goes to rms_norm_mul_rows twice and rope_pair).
if [ -f "$(dirname "$check")/../plugins/packs/rocmforge-pack-sm_90.so" ]; then
  printf '{"plugin_dirs": ["%s"], "backend_options": {"hip": {"arch_override": "sm_90"}}}\n' "$cpu" >"$tmp/own.json"
  expect 0 "fusions: add_rms_norm_mul_1 add_rms_norm_mul add_rms_norm_mul_4 head_norm_rope rms_norm_mul_rows rms_norm_mul_1 rms_norm_mul rms_norm_mul_4 kv_append rope_pair moe_route moe_gate_up moe_down_sum swiglu_q8 projections cols_run gate_up_swiglu matmul_rope mmq_run" -- "$check" --config "$tmp/own.json"
  expect 0 "69 claim\(s\), 0 unchecked, 0 failure" -- "$check" --config "$tmp/own.json" --expect-claims 69
fi
# The gfx1100 pack (where this build has one): the same fusions, but its backend runs 2..16 columns
# on no column kernel (the AMD packs have no rf_mvqn_*), so the matmul fusions claim one-row cases only.
# Its expert kernels have no Q6_K (the generic path runs it): five expert claims. The grid i-quants'
# matmuls stay unfused there (one-column kernels only); their projection case's K/V appends are
# kv_append's.
if [ -f "$(dirname "$check")/../plugins/packs/rocmforge-pack-gfx1100.so" ]; then
  printf '{"plugin_dirs": ["%s"], "backend_options": {"hip": {"arch_override": "gfx1100"}}}\n' "$cpu" >"$tmp/own-amd.json"
  expect 0 "49 claim\(s\), 0 unchecked, 0 failure" -- "$check" --config "$tmp/own-amd.json" --expect-claims 49
fi
# A pack among the core's plugins is listed as such, not used by the core.
printf '{"plugin_dirs": ["%s"]}\n' "$(dirname "$example")" >"$tmp/plugins.json"
expect 0 "kernel pack for sm_90, not used from here" -- "$rocmforge" info --config "$tmp/plugins.json"
finish "pack check"
