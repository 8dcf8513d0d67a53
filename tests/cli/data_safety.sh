#!/usr/bin/env bash
# No command destroys or half-writes data by accident: quantize will not replace its input (also
# through links) unless asked; output paths and --profile FILE are checked before any work;
# info does not write the trace a profiler-enabled config names.
# Usage: data_safety.sh ROCMFORGE_EXE F16_MODEL
set -u
exe=$1
f16=$2
. "$(dirname "$0")/lib.sh"

cp "$f16" "$tmp/in.gguf"
ln -s "$tmp/in.gguf" "$tmp/link.gguf"
sum=$(md5sum <"$tmp/in.gguf")
expect 2 "is the input file.*--overwrite-input" -- "$exe" quantize "$tmp/in.gguf" "$tmp/in.gguf" Q8_0
expect 2 "is the input file" -- "$exe" quantize "$tmp/in.gguf" "$tmp/link.gguf" Q8_0
[ "$(md5sum <"$tmp/in.gguf")" = "$sum" ] || fail "quantize IN IN changed the input"
mkdir "$tmp/outdir"
expect 2 "'$tmp/outdir': is a directory" -- "$exe" quantize "$tmp/in.gguf" "$tmp/outdir" Q8_0
expect 2 "folder '$tmp/none' does not exist" -- "$exe" quantize "$tmp/in.gguf" "$tmp/none/out.gguf" Q8_0
# Refused before the work: no tensor line was printed.
"$exe" quantize "$tmp/in.gguf" "$tmp/outdir" Q8_0 >"$tmp/q.out" 2>&1
grep -q "\] token_embd" "$tmp/q.out" && fail "quantize into a directory converted tensors first"
expect 0 "quantize: .* tensors" -- "$exe" quantize "$tmp/in.gguf" "$tmp/in.gguf" Q8_0 --overwrite-input
[ "$(md5sum <"$tmp/in.gguf")" != "$sum" ] || fail "quantize --overwrite-input left the input as it was"

# --profile FILE that cannot be written: refused at start (exit 2), nothing generated.
expect 2 "profiler trace '$tmp/none/t.json': folder .* does not exist" -- \
  "$exe" generate -m "$f16" -p x -n 1 --profile "$tmp/none/t.json"
expect 2 "profiler trace '$tmp/outdir': is a directory" -- "$exe" generate -m "$f16" -p x -n 1 --profile "$tmp/outdir"
"$exe" generate -m "$f16" -p x -n 2 --profile "$tmp/outdir" >"$tmp/gen.out" 2>/dev/null
[ -s "$tmp/gen.out" ] && fail "generate with an unwritable --profile ran: $(cat "$tmp/gen.out")"

# info with a profiler-enabled config: no trace file appears.
echo "{\"backends\": [\"cpu\"], \"profiler\": {\"enabled\": true, \"trace\": \"$tmp/info-trace.json\"}}" >"$tmp/prof.json"
expect 0 "config:" -- "$exe" info --config "$tmp/prof.json"
[ -e "$tmp/info-trace.json" ] && fail "info wrote the trace named by the config"
# A run with that config does write it (the config asked for it).
expect 0 "^generation:" -- "$exe" generate -m "$f16" -p x -n 1 --config "$tmp/prof.json"
[ -s "$tmp/info-trace.json" ] || fail "generate with a profiler config wrote no trace"

finish "data safety"
