#!/usr/bin/env bash
# Installs BUILD_DIR into a scratch DESTDIR and uses the installed tree from another folder, as a
# new user would: `rocmforge info`, `generate` and `bench` on the installed default model, the
# examples built through `pkg-config rocmforge`, and no shared library beyond the C/C++ runtime.
# Usage: scripts/install_check.sh BUILD_DIR
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: scripts/install_check.sh BUILD_DIR}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

meson install -C "$build" --destdir "$work/dest" --quiet
prefix=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
root=$work/dest$prefix
# Only what was found through the install tree may be used.
unset ROCMFORGE_PLUGIN_PATH ROCMFORGE_DEFAULT_MODEL ROCMFORGE_CONFIG
mkdir "$work/elsewhere" && cd "$work/elsewhere"

for f in bin/rocmforge bin/rocmforge-bench-ops bin/rocmforge-pack-check lib/librocmforge.so lib/rocmforge/rocmforge-cpu.so \
         lib/pkgconfig/rocmforge.pc include/rocmforge/rocmforge.h include/rocmforge/abi.h include/rocmforge/pack_abi.h \
         include/rocmforge/pack_kernel.h include/rocmforge/kernel_args.h share/rocmforge/models/default.gguf; do
  [ -e "$root/$f" ] || fail "not installed: $f"
done
# Kernel packs go to lib/rocmforge/packs (the HIP plugin's default), one per built arch.
for p in "$build"/plugins/packs/rocmforge-pack-*.so; do
  [ -e "$p" ] || continue
  [ -e "$root/lib/rocmforge/packs/$(basename "$p")" ] || fail "pack not installed in lib/rocmforge/packs: $(basename "$p")"
done
[ -z "$(find "$root/bin" -name '*test*')" ] || fail "a test program is installed"
# tests/hip/meson.build still installs rocmforge-opcheck (its owner's change to make).
[ -e "$root/bin/rocmforge-opcheck" ] && echo "warning: bin/rocmforge-opcheck is installed (tests/hip/meson.build: install: true)"
# The public headers compile without the dependencies they must not leak.
grep -lE 'spdlog|fmt/|rapidjson|boost' "$root"/include/rocmforge/* && fail "a public header includes spdlog/fmt/RapidJSON/Boost"

# Runtime binaries need nothing beyond the C/C++ runtime (the GPU plugins load theirs at run time).
allowed='^(libc|libm|libstdc\+\+|libgcc_s|ld-linux-x86-64|librocmforge)\.so'
for f in "$root"/bin/* "$root"/lib/librocmforge.so "$root"/lib/rocmforge/rocmforge-cpu.so "$root"/lib/rocmforge/rocmforge-profiler.so \
         $(find "$root/lib/rocmforge/packs" -name '*.so' 2>/dev/null); do
  for lib in $(readelf -d "$f" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p'); do
    [[ $lib =~ $allowed ]] || fail "$f links $lib"
  done
done
[ "$(readelf -d "$root/lib/librocmforge.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')" = librocmforge.so.0 ] || fail "soname"

run() { # NAME PATTERN -- command...: exit 0 and output matching PATTERN
  local name=$1 pattern=$2 out; shift 3
  if out=$("$@" 2>&1) && grep -qE -- "$pattern" <<<"$out"; then echo "ok: $name"; else fail "$name"; echo "$out" | tail -5; fi
}
run "installed info" "cpu" -- "$root/bin/rocmforge" info
run "installed generate -n 16" "^Once upon a time" -- "$root/bin/rocmforge" generate -n 16 -s 1
run "installed bench" "tg4" -- "$root/bin/rocmforge" bench -p 16 -n 4 -r 1
run "installed bench-ops --help" "usage" -- "$root/bin/rocmforge-bench-ops" --help

# The examples, built against the installed tree only.
export PKG_CONFIG_PATH=$root/lib/pkgconfig
flags="$(pkg-config --define-prefix --cflags --libs rocmforge) -Wl,-rpath,$root/lib"
cc -std=c11 -Wall -Werror -o simple "$src/examples/simple.c" $flags || fail "examples/simple.c does not build"
c++ -std=c++17 -Wall -Werror -o chat "$src/examples/chat.cpp" $flags || fail "examples/chat.cpp does not build"
cc -std=c11 -Wall -Werror -o batched "$src/examples/batched.c" $flags || fail "examples/batched.c does not build"
run "example simple" "^In the beginning" -- ./simple "" "In the beginning" 16
run "example chat" "<\|im_start\|>assistant" -- ./chat
run "example batched" "sequence 3" -- ./batched "" "And God said" 4 16

# The Python package (python/rocmforge), from the install only: Debian's python3 with the
# installed site-packages on PYTHONPATH (a DESTDIR install is not on sys.path), run here: the
# installed library and default model, the same text as the installed CLI, the examples.
py_init=$(find "$root" -path '*-packages/rocmforge/__init__.py' | head -1)
if [ -z "$py_init" ]; then
  fail "not installed: the Python package rocmforge"
elif [ ! -x /usr/bin/python3 ]; then
  echo "skipped: the Python package (no /usr/bin/python3)"
else
  py_site=$(dirname "$(dirname "$py_init")")
  cli_text=$("$root/bin/rocmforge" generate -n 16 -s 1 2>/dev/null)
  cat >py_check.py <<'PY'
import os, sys
import rocmforge
root, expected = sys.argv[1], sys.argv[2]
lib = rocmforge.load_library()
assert rocmforge.__file__.startswith(root + "/"), rocmforge.__file__
assert os.path.realpath(lib.path).startswith(os.path.realpath(root) + "/"), lib.path
assert lib.plugin_dirs == [], lib.plugin_dirs  # an installed library finds its plugins itself
with rocmforge.Llama() as llm:  # the installed default model
    out = llm("Once upon a time", max_tokens=16, seed=1)
    assert "Once upon a time" + out["choices"][0]["text"] == expected, (out, expected)
    chunks = llm("Once upon a time", max_tokens=16, seed=1, stream=True)
    assert "".join(c["choices"][0]["text"] for c in chunks) == out["choices"][0]["text"]
try:
    rocmforge.Llama("missing.gguf")
except rocmforge.FileError as e:
    assert e.code == 2 and "missing.gguf" in e.message
print("ok")
PY
  run "installed python package: its own library and model, the CLI's text" "^ok$" -- \
    env PYTHONPATH="$py_site" /usr/bin/python3 py_check.py "$root" "$cli_text"
  run "installed python example stream" "^\[length\]" -- env PYTHONPATH="$py_site" /usr/bin/python3 "$src/examples/python/stream.py" "" "In the beginning" 16
  run "installed python example chat" "^1 turns" -- env PYTHONPATH="$py_site" /usr/bin/python3 "$src/examples/python/chat.py" "" 16 "Who made the heaven and the earth?"
  run "installed python example batch" "^--- And God said" -- env PYTHONPATH="$py_site" /usr/bin/python3 "$src/examples/python/batch.py" "" 2
fi

# The example kernel pack (examples/pack), built with its own meson.build against the installed
# headers only (pkg-config with the DESTDIR prefix), then checked by the installed
# rocmforge-pack-check through a config naming it: its claims and argument binding against the
# CPU backend (docs/PLUGINS.md). Needs nvcc for the pack's code object.
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [ -x "$nvcc" ]; then
  printf "[binaries]\npkgconfig = ['pkg-config', '--define-prefix']\n" >pkgconfig.ini
  if meson setup --native-file pkgconfig.ini -Dcuda="$(dirname "$(dirname "$nvcc")")" pack-build "$src/examples/pack" >pack-setup.log 2>&1 &&
     ninja -C pack-build >pack-build.log 2>&1; then
    echo "ok: examples/pack builds against the install"
    # Only the example (an empty pack folder): the installed packs' own fusions are checked next.
    mkdir -p no-packs
    printf '{"backend_options": {"hip": {"packs": ["%s"], "kernel_pack_dirs": ["%s"], "arch_override": "sm_90"}}}\n' \
      "$PWD/pack-build/rocmforge-pack-example-sm_90.so" "$PWD/no-packs" >pack.json
    run "installed rocmforge-pack-check on examples/pack" "4 claim\(s\), 0 unchecked, 0 failure" -- \
      "$root/bin/rocmforge-pack-check" --config pack.json --expect-claims 4
    if [ -n "$(find "$root" -name rocmforge-pack-sm_90.so -path '*rocmforge/packs/*' | head -1)" ]; then
      printf '{"backend_options": {"hip": {"arch_override": "sm_90"}}}\n' >own-pack.json
      run "installed rocmforge-pack-check on the installed sm_90 pack (fused norm, head_norm_rope, swiglu_q8, kv_append, rope_pair, moe_route, moe_gate_up, moe_down_sum, projections, cols_run, gate_up_swiglu, matmul_rope, mmq_run)" "69 claim\(s\), 0 unchecked, 0 failure" -- \
        "$root/bin/rocmforge-pack-check" --config own-pack.json --expect-claims 69
    fi
  else
    fail "examples/pack does not build against the install"; tail -5 pack-setup.log pack-build.log 2>/dev/null
  fi
else
  echo "skipped: examples/pack (no nvcc for its code object)"
fi

[ "$fails" = 0 ] && echo "install check: all passed" || { echo "$fails install check(s) failed"; exit 1; }
