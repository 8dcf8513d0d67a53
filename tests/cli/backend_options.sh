#!/usr/bin/env bash
# Backend options from the config, --backend-option and `rocmforge info`: values checked against
# the plugin's descriptions (exit 2 naming the key and what it accepts), the flag over the file,
# the value reaching the backend (the CPU backend's details say which kernels it picked), every
# runtime command taking the flag. Usage: backend_options.sh ROCMFORGE_EXE MODEL FAKEOPTS_PLUGIN
set -u
exe=$1
model=$2
fake_dir=$(dirname "$3")
. "$(dirname "$0")/lib.sh"

# info: every option of the cpu plugin with its value in force, default, choices and meaning.
expect 0 "^ +simd = auto \(default\)" -- "$exe" info --backend cpu
expect 0 "enum: one of auto, scalar, avx2, avx512vnni; default auto\. " -- "$exe" info --backend cpu
expect 0 "int: an integer in 0\.\.1024; default 0\." -- "$exe" info --backend cpu
expect 0 "^ +n_threads = 3 \(from -t" -- "$exe" info --backend cpu -t 3
# The flag's value reaches the backend: its details name the kernels in use.
expect 0 "^ +simd = scalar \(set by --backend-option cpu.simd=scalar\)" -- "$exe" info --backend cpu --backend-option cpu.simd=scalar
expect 0 "threads=[0-9]+ simd=scalar \(detected" -- "$exe" info --backend cpu --backend-option cpu.simd=scalar

# The config's value, and the flag over it (a later flag over an earlier one).
cat >"$tmp/scalar.json" <<'JSON'
{"backends": ["cpu"], "backend_options": {"cpu": {"simd": "scalar", "weights": "copy"}}}
JSON
expect 0 "^ +simd = scalar \(set in $tmp/scalar.json\)" -- "$exe" info --config "$tmp/scalar.json"
expect 0 "simd=scalar \(detected" -- "$exe" info --config "$tmp/scalar.json"
best=$("$exe" info --backend cpu 2>/dev/null | grep -o 'simd=[a-z0-9]* (detected [a-z0-9]*)' | sed 's/.*detected \([a-z0-9]*\))/\1/')
[ -n "$best" ] || fail "info: no 'detected' SIMD level in the cpu backend's details"
expect 0 "simd=$best \(detected" -- "$exe" info --config "$tmp/scalar.json" --backend-option cpu.simd=scalar --backend-option cpu.simd=auto
expect 0 "^ +weights = copy \(set in" -- "$exe" info --config "$tmp/scalar.json" --backend-option cpu.simd=auto
# An instance's option, over the backend's, for that instance only.
expect 0 "^ +on cpu:0: simd = scalar \(set by --backend-option cpu:0.simd=scalar\)" -- \
  "$exe" info --backend cpu:0 --backend-option cpu.simd=avx2 --backend-option cpu:0.simd=scalar
expect 0 "threads=[0-9]+ simd=scalar \(detected" -- "$exe" info --backend cpu:0 --backend-option cpu.simd=avx2 --backend-option cpu:0.simd=scalar

# Malformed flags and bad values: exit 2 naming the flag, the key and what it accepts.
expect 2 "--backend-option 'cpu.simd' has no '='" -- "$exe" info --backend-option cpu.simd
expect 2 "--backend-option 'simd=avx2' names no backend before a '.'" -- "$exe" info --backend-option simd=avx2
expect 2 "--backend-option 'cpu.=1' has an empty backend or key" -- "$exe" info --backend-option cpu.=1
expect 2 "neither a backend name nor NAME:DEVICE" -- "$exe" info --backend-option cpu:x.simd=avx2
expect 2 "option --backend-option needs a value" -- "$exe" info --backend-option
expect 2 "cpu.smd is not an option of backend 'cpu' \(its options: n_threads, weights, simd\)" -- \
  "$exe" info --backend cpu --backend-option cpu.smd=avx2
expect 2 "backend_options names backend 'warp', which no plugin provides" -- "$exe" info --backend cpu --backend-option warp.x=1
expect 2 "backend_options names instance 'cpu:1', which \"backends\" does not list" -- "$exe" info --backend cpu --backend-option cpu:1.simd=avx2
expect 2 "cpu.simd is \"avx9\", but option simd of backend 'cpu' is of type enum: one of auto, scalar, avx2, avx512vnni \(default auto\)" -- \
  "$exe" info --backend cpu --backend-option cpu.simd=avx9
expect 2 "cpu.n_threads is 5000, but option n_threads of backend 'cpu' is of type int: an integer in 0\.\.1024" -- \
  "$exe" info --backend cpu --backend-option cpu.n_threads=5000
expect 2 "cpu.n_threads is \"four\", .*of type int" -- "$exe" info --backend cpu --backend-option cpu.n_threads=four
expect 2 "^error: $tmp/bad.json: backend_options.cpu.weights is \"mmap\", .*one of auto, copy, map" -- \
  bash -c "echo '{\"backend_options\": {\"cpu\": {\"weights\": \"mmap\"}}}' >'$tmp/bad.json' && '$exe' info --backend cpu --config '$tmp/bad.json'"

# Every command that starts a runtime takes the flag and refuses a bad value before loading.
echo "In the beginning God created the heaven and the earth." >"$tmp/text.txt"
for cmd in generate bench bench-inference bench-memory "perplexity -f $tmp/text.txt" serve; do
  # shellcheck disable=SC2086 # the command's own arguments split
  expect 2 "cpu.simd is \"avx9\"" -- "$exe" $cmd -m "$model" --backend cpu --backend-option cpu.simd=avx9
done
expect 0 "." -- "$exe" generate -m "$model" --backend cpu -p "In the beginning" -n 4 --temp 0 --backend-option cpu.simd=scalar
expect 2 "option --candidates needs on, off or always, got 'sometimes'" -- "$exe" serve -m "$model" --candidates sometimes

# A plugin describing one option of each type (tests/core/fake_backend.c, fakeopts): JSON
# values from the flag, a plain word as a string, and a listed key it does not describe.
cat >"$tmp/fake.json" <<JSON
{"plugin_dirs": ["$fake_dir"], "backends": ["fakeopts"], "backend_options": {"fakeopts": {"level": 4}}}
JSON
f=("$exe" info --config "$tmp/fake.json")
expect 0 "^ +level = 4 \(set in $tmp/fake.json\)" -- "${f[@]}"
expect 0 "^ +mode = auto \(default\)" -- "${f[@]}"
expect 0 "^ +plain \(not set: the backend's default\)" -- "${f[@]}"
expect 0 "not described by its plugin: passed on unchecked" -- "${f[@]}"
expect 0 "^ +fakehost \(.*\):$" -- "${f[@]}"
expect 0 "lists no options \(ABI < 1.2\): backend_options.fakehost is passed on unchecked" -- "${f[@]}"
expect 0 "^ +tags = \[\"a\",\"b\"\] \(set by --backend-option" -- "${f[@]}" --backend-option 'fakeopts.tags=["a","b"]'
expect 0 "^ +label = hello world \(set by" -- "${f[@]}" --backend-option 'fakeopts.label=hello world'
expect 0 "^ +fast = true \(set by" -- "${f[@]}" --backend-option fakeopts.fast=true
expect 0 "^ +plain = \{\"x\":1\} \(set by" -- "${f[@]}" --backend-option 'fakeopts.plain={"x":1}'
expect 0 "^ +level = 9 \(set by --backend-option fakeopts.level=9\)" -- "${f[@]}" --backend-option fakeopts.level=9
expect 2 "fakeopts.level is 10, but option level of backend 'fakeopts' is of type int: an integer in 0\.\.9 \(default 2\)" -- \
  "${f[@]}" --backend-option fakeopts.level=10
expect 2 "fakeopts.fast is \"yes\", .*of type bool: true or false" -- "${f[@]}" --backend-option fakeopts.fast=yes
expect 2 "fakeopts.tags is \"a\", .*of type string list: an array of strings" -- "${f[@]}" --backend-option fakeopts.tags=a
expect 2 "fakeopts.label is 7, .*of type string: a string" -- "${f[@]}" --backend-option fakeopts.label=7
expect 2 "fakeopts.mode is \"quick\", .*one of auto, fast, safe" -- "${f[@]}" --backend-option fakeopts.mode=quick

finish "backend options"
