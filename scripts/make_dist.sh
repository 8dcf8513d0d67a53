#!/usr/bin/env bash
# Copies the runtime files of a build folder into dist/ (same relative layout, so plugin discovery
# works) to carry to the GPU machine. Usage: scripts/make_dist.sh BUILD_DIR
set -euo pipefail
b=${1:-build}
rm -rf dist && mkdir -p dist/tools dist/backends/cpu dist/backends/hip dist/plugins/packs dist/profiler dist/tests/hip dist/benches dist/examples
cp "$b/tools/rocmforge" dist/tools/
cp "$b/tools/rocmforge-pack-check" dist/tools/ 2>/dev/null || true
cp "$b"/backends/cpu/*.so dist/backends/cpu/
cp "$b"/backends/hip/rocmforge-hip.so dist/backends/hip/ 2>/dev/null || true
# Kernel packs (rocmforge-pack-<arch>.so): the HIP plugin finds them in ../../plugins/packs.
cp "$b"/plugins/packs/*.so dist/plugins/packs/ 2>/dev/null || true
# The example out-of-tree pack, for a config's backend_options.hip.packs (docs/PLUGINS.md).
cp "$b"/examples/rocmforge-pack-example-*.so dist/examples/ 2>/dev/null || true
cp "$b"/profiler/*.so dist/profiler/ 2>/dev/null || true
cp "$b"/tests/hip/rocmforge-opcheck dist/tests/hip/ 2>/dev/null || true
find "$b/benches" -maxdepth 1 -type f -executable -exec cp {} dist/benches/ \; 2>/dev/null || true
# The serving load test (python3, standard library only; docs/SERVING.md).
mkdir -p dist/scripts && cp scripts/serve_load.py dist/scripts/
[ -d ../shared/yardstick ] && cp -r ../shared/yardstick dist/
du -sh dist
