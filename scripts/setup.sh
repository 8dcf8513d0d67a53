#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages), configures ROCmForge into ./build and builds.
# Usage: scripts/setup.sh [--all | --gpu] [BUILD_DIR] [extra meson options...]
#
# Without an option it builds only what `rocmforge generate` runs (the CLI, the CPU plugin, the
# default model), plus the HIP plugin and its kernel packs when a GPU is present (/dev/kfd for
# AMD, /dev/nvidia0 for NVIDIA) and its toolchain was found: a first run is minutes, not the
# quarter of an hour the tests, benches, both GPU plugins and every kernel pack take.
#   --gpu  also the GPU plugins and kernel packs without a GPU present (installs hipcc)
#   --all  everything (tests, benches, examples, GPU plugins and packs where the toolchains
#          exist; installs hipcc): what `meson test` and `meson install` need
set -euo pipefail
cd "$(dirname "$0")/.."
mode=run
case "${1:-}" in
  --all) mode=all; shift ;;
  --gpu) mode=gpu; shift ;;
  -*) echo "setup.sh: unknown option '$1' (expected --all or --gpu, then BUILD_DIR and meson options)" >&2; exit 2 ;;
esac
build=${1:-build}
shift || true

amd_gpu=0; nvidia_gpu=0
[ -e /dev/kfd ] && amd_gpu=1
[ -e /dev/nvidia0 ] && nvidia_gpu=1

pkgs=(meson ninja-build pkg-config g++ libspdlog-dev libfmt-dev rapidjson-dev catch2 libboost-dev ccache)
# hipcc (clang-15 with AMD targets) builds the RDNA kernel packs: for --all/--gpu, or an AMD GPU.
want_hip=0
{ [ "$mode" != run ] || [ "$amd_gpu" = 1 ]; } && want_hip=1
[ "${ROCMFORGE_NO_HIP:-0}" = 1 ] && want_hip=0
[ "$want_hip" = 1 ] && pkgs+=(hipcc libamdhip64-dev)
# The Python package's tests (meson test python) run with Debian's python3 -m pytest.
[ "$mode" = all ] && pkgs+=(python3-pytest)
# The chat-template test renders the published templates with jinja2 to compare byte for byte.
[ "$mode" = all ] && pkgs+=(python3-jinja2)
scripts/install_missing.sh "${pkgs[@]}"

if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" "$@"
elif [ $# -gt 0 ]; then
  meson configure "$build" "$@"
elif [ "$want_hip" = 1 ] && command -v hipcc >/dev/null && grep -q 'Program hipcc found: NO' "$build/meson-logs/meson-log.txt"; then
  # Configured by a plain run before hipcc was installed: look for the toolchains again.
  meson setup --reconfigure "$build"
fi

if [ "$mode" = all ]; then
  ninja -C "$build"
  exit 0
fi

# What `rocmforge generate` runs.
targets=(tools/rocmforge backends/cpu/rocmforge-cpu.so models/default.gguf)
# The HIP plugin flavour of each GPU present (or of every toolchain found, with --gpu), and its packs.
all_targets=$(ninja -C "$build" -t targets all | cut -d: -f1)
pick() { grep -E "^($1)\$" <<<"$all_targets" || true; }
if [ "$mode" = gpu ] || [ "$nvidia_gpu" = 1 ]; then
  targets+=($(pick 'backends/hip/rocmforge-hip\.so|plugins/packs/rocmforge-pack-sm_[0-9a-z]+\.so'))
fi
if [ "$mode" = gpu ] || [ "$amd_gpu" = 1 ]; then
  targets+=($(pick 'backends/hip/rocmforge-hip-amd\.so|plugins/packs/rocmforge-pack-gfx[0-9a-z]+\.so'))
fi
ninja -C "$build" "${targets[@]}"
