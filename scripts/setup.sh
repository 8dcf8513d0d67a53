#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages), configures and builds ROCmForge into ./build.
# Usage: scripts/setup.sh [BUILD_DIR] [extra meson options...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true

pkgs=(meson ninja-build pkg-config g++ libspdlog-dev libfmt-dev rapidjson-dev catch2 libboost-dev ccache)
# hipcc (clang-15 with AMD targets) builds the RDNA kernel packs; optional but installed by default.
[ "${ROCMFORGE_NO_HIP:-0}" = 1 ] || pkgs+=(hipcc libamdhip64-dev)
scripts/install_missing.sh "${pkgs[@]}"

if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" "$@"
elif [ $# -gt 0 ]; then
  meson configure "$build" "$@"
fi
ninja -C "$build"
