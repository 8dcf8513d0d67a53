#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages), configures and builds ROCmForge into ./build.
# Usage: scripts/setup.sh [BUILD_DIR] [extra meson options...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true

need=()
for pkg in meson ninja-build pkg-config g++ libspdlog-dev libfmt-dev rapidjson-dev catch2 libboost-dev ccache; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
# hipcc (clang-15 with AMD targets) builds the RDNA kernel packs; optional but installed by default.
if [ "${ROCMFORGE_NO_HIP:-0}" != 1 ]; then
  for pkg in hipcc libamdhip64-dev; do dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg"); done
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" "$@"
elif [ $# -gt 0 ]; then
  meson configure "$build" "$@"
fi
ninja -C "$build"
