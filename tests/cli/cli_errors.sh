#!/usr/bin/env bash
# Every bad input to the CLI must give a clear message and exit code 1 or 2 — never a signal.
# Usage: cli_errors.sh ROCMFORGE_EXE DATA_DIR
set -u
exe=$1
data=$2
. "$(dirname "$0")/lib.sh"

echo '{"backends": ["cpu"' >"$tmp/bad.json"
echo '{"backends": ["nosuch"]}' >"$tmp/unknown.json"
echo '{"plugin_dirs": ["/nonexistent/dir"]}' >"$tmp/nodir.json"
echo '{"backend": ["cpu"]}' >"$tmp/typo.json"
echo '{"op_overrides": {"atention": "cpu"}}' >"$tmp/badop.json"
echo '{"backends": ["cpu"], "backend_options": {"cpu": {"simdd": "scalar"}}}' >"$tmp/badoption.json"
echo '{"backends": ["cpu"], "backend_options": {"cpuu": {}}}' >"$tmp/badbackend.json"
mkdir -p "$tmp/fakeplugins" && cp "$data/vocab/README.md" "$tmp/fakeplugins/librubbish.so"
echo "{\"backends\": [\"cpu\"], \"plugin_dirs\": [\"$tmp/fakeplugins\"]}" >"$tmp/junkplugin.json"

expect 2 "unknown command" -- "$exe" frobnicate
expect 2 "not valid JSON at offset" -- "$exe" info --config "$tmp/bad.json"
expect 2 "no plugin provides backend 'nosuch'" -- "$exe" info --config "$tmp/unknown.json"
expect 2 "does not exist" -- "$exe" info --config "$tmp/nodir.json"
expect 2 "unknown key" -- "$exe" info --config "$tmp/typo.json"
expect 2 "op \"atention\", which does not exist \(ops: get_rows, matmul.*attention" -- "$exe" info --config "$tmp/badop.json"
expect 2 "backend_options.cpu.simdd is not an option of backend 'cpu' \(its options: n_threads, weights, simd\)" -- "$exe" info --config "$tmp/badoption.json"
expect 2 "backend_options names backend 'cpuu'.*backends found: cpu" -- "$exe" info --config "$tmp/badbackend.json"
expect 2 "cannot open config" -- "$exe" info --config "$tmp/missing.json"
expect 2 "needs a value" -- "$exe" info --config
expect 2 "unknown option" -- "$exe" info --bogus
# A junk .so in a named plugin folder is reported, the rest carries on.
expect 0 "cannot load" -- "$exe" info --config "$tmp/junkplugin.json"

# Malformed GGUF files through the commands that read them.
printf 'GGUF' >"$tmp/short.gguf"
printf 'XXXX\003\000\000\000' >"$tmp/magic.gguf"
head -c 1000 "$data/vocab/ggml-vocab-llama-spm.gguf" >"$tmp/trunc.gguf"
for f in short magic trunc; do
  if "$exe" --help 2>&1 | grep -q inspect; then
    expect 1 "offset" -- "$exe" inspect "$tmp/$f.gguf"
  fi
  if "$exe" --help 2>&1 | grep -q dump-tensor; then
    expect 1 "offset" -- "$exe" dump-tensor "$tmp/$f.gguf" x -o "$tmp/out.bin"
  fi
  if "$exe" --help 2>&1 | grep -q generate; then
    expect 1 "offset" -- "$exe" generate -m "$tmp/$f.gguf" -n 1 -p hi
  fi
done
if "$exe" --help 2>&1 | grep -q generate; then
  expect 1 "no such file|cannot open" -- "$exe" generate -m "$tmp/none.gguf" -n 1 -p hi
fi

# rocmforge imatrix and quantize --imatrix: bad arguments and files, then one real run.
if "$exe" --help 2>&1 | grep -q imatrix; then
  "$exe" mkmodel --shape tiny --type F16 --vocab "$data/vocab/ggml-vocab-llama-spm.gguf" -o "$tmp/tiny.gguf" \
    --seed 1 -t 2 >/dev/null
  for i in 1 2 3 4 5 6 7 8; do cat "$data/vocab/README.md"; done >"$tmp/text.txt"
  expect 2 "-f TEXT is required" -- "$exe" imatrix -m "$tmp/tiny.gguf" -o "$tmp/im.gguf"
  expect 2 "-o IMATRIX is required" -- "$exe" imatrix -m "$tmp/tiny.gguf" -f "$tmp/text.txt"
  expect 2 "too small" -- "$exe" imatrix -m "$tmp/tiny.gguf" -f "$tmp/text.txt" -o "$tmp/im.gguf" -c 8
  expect 1 "fewer than one chunk" -- "$exe" imatrix -m "$tmp/tiny.gguf" -f "$data/vocab/README.md" -o "$tmp/im.gguf" -c 4096
  expect 0 "entries from 2 chunks" -- "$exe" imatrix -m "$tmp/tiny.gguf" -f "$tmp/text.txt" -o "$tmp/im.gguf" -c 64 --chunks 2
  expect 2 "needs an importance matrix" -- "$exe" quantize "$tmp/tiny.gguf" "$tmp/q.gguf" IQ2_XXS
  expect 1 "not an importance matrix" -- "$exe" quantize "$tmp/tiny.gguf" "$tmp/q.gguf" IQ2_XXS --imatrix "$tmp/tiny.gguf"
  expect 1 "truncated|not an importance matrix" -- "$exe" quantize "$tmp/tiny.gguf" "$tmp/q.gguf" IQ2_XXS --imatrix "$tmp/text.txt"
  expect 0 "iq2_xxs" -- "$exe" quantize "$tmp/tiny.gguf" "$tmp/q.gguf" IQ2_XXS --imatrix "$tmp/im.gguf" -t 2
  # Expert weights: one matrix per expert.
  "$exe" mkmodel --shape tiny-mixtral --type F16 --vocab "$data/vocab/ggml-vocab-llama-spm.gguf" \
    -o "$tmp/moe.gguf" --seed 1 -t 2 >/dev/null
  expect 0 "entries from 2 chunks" -- "$exe" imatrix -m "$tmp/moe.gguf" -f "$tmp/text.txt" -o "$tmp/moe-im.gguf" -c 64 --chunks 2
  expect 0 "ffn_down_exps.weight.counts +f32 +\[1, 8\]" -- "$exe" inspect "$tmp/moe-im.gguf"
  expect 0 "ffn_down_exps.weight +f16 -> iq2_xxs" -- "$exe" quantize "$tmp/moe.gguf" "$tmp/moe-q.gguf" IQ2_XXS --imatrix "$tmp/moe-im.gguf" -t 2
fi

finish "CLI error cases"
