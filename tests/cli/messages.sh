#!/usr/bin/env bash
# What the CLI says: help texts point at the shipped model and print no printf escapes, info
# lists backends in the config's order (each name once) and says why none started, the config
# in force shows backend_options, and Ctrl-C during generate still prints the statistics.
# Usage: messages.sh ROCMFORGE_EXE MODEL
set -u
exe=$1
model=$2
. "$(dirname "$0")/lib.sh"

# Every --help: no "%%" (a printf escape printed as is), no "(see below)" left dangling.
for cmd in $("$exe" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }'); do
  "$exe" "$cmd" --help >"$tmp/help.txt" 2>&1 || fail "$cmd --help exited $?"
  grep -q '%%' "$tmp/help.txt" && fail "$cmd --help prints '%%': $(grep '%%' "$tmp/help.txt")"
  grep -q 'see below' "$tmp/help.txt" && fail "$cmd --help says 'see below'"
done
expect 0 "models/trained|DEFAULT_MODEL.md" -- "$exe" generate --help
"$exe" generate --help | grep -q mkmodel && fail "generate --help still sends users to mkmodel"
# The missing-default-model error points at the shipped model.
(cd "$tmp" && ROCMFORGE_DEFAULT_MODEL= "$exe" generate -p x -n 1 >/dev/null 2>"$tmp/nomodel.err"; exit 0)
if grep -q "no default model found" "$tmp/nomodel.err"; then
  grep -q "models/trained/kjv-q8_0.gguf" "$tmp/nomodel.err" || fail "missing-model error: $(tail -1 "$tmp/nomodel.err")"
  grep -q "mkmodel" "$tmp/nomodel.err" && fail "missing-model error still suggests mkmodel"
fi

# info: the order in force (here the built-in hip, cpu: only that list may name a backend whose
# plugin this build lacks), each backend once, backend_options in the config in force.
echo '{"backend_options": {"cpu": {"simd": "scalar"}}}' >"$tmp/order.json"
"$exe" info --config "$tmp/order.json" >"$tmp/info.out" 2>&1 || fail "info exited $?"
grep -q '^backends (priority order: hip, cpu):' "$tmp/info.out" || fail "info: $(grep priority "$tmp/info.out")"
awk '/^backends \(priority/ { on = 1; next } on && /^  [a-z]+:/ { sub(":", "", $1); printf "%s ", $1 }' "$tmp/info.out" >"$tmp/order.txt"
[ "$(cat "$tmp/order.txt")" = "hip cpu " ] || fail "info lists backends as '$(cat "$tmp/order.txt")', config says hip, cpu"
grep -q '"backend_options":{"cpu":{"simd":"scalar"}}' "$tmp/info.out" || fail "info: config in force lacks backend_options"
# Two copies of the cpu plugin: "backends found" names cpu once (and hip once where the GPU
# plugins are built: both flavours provide it).
plugin=$(awk '$1 == "cpu" && /loaded/ { sub(":$", "", $3); print $3; exit }' "$tmp/info.out")
mkdir -p "$tmp/p1" "$tmp/p2" && cp "$plugin" "$tmp/p1/" && cp "$plugin" "$tmp/p2/"
echo "{\"backends\": [\"nosuch\"], \"plugin_dirs\": [\"$tmp/p1\", \"$tmp/p2\"]}" >"$tmp/dup.json"
expect 2 "backends found: cpu(, hip)?\)" -- "$exe" info --config "$tmp/dup.json"
# No backend starts (an option value the cpu plugin's description refuses): info still lists
# what it found and every backend's options, and the reason leads the error (exit 2).
echo '{"backends": ["cpu"], "backend_options": {"cpu": {"simd": "bogus"}}}' >"$tmp/simd.json"
"$exe" info --config "$tmp/simd.json" >"$tmp/none.out" 2>"$tmp/none.err"
rc=$?
[ $rc = 2 ] || fail "info with no backend starting exited $rc"
grep -q "^plugins:" "$tmp/none.out" && grep -q "none started" "$tmp/none.out" || fail "info printed: $(cat "$tmp/none.out")"
grep -q "^ *simd = bogus (set in $tmp/simd.json)" "$tmp/none.out" || fail "info: the refused option is not listed"
head -1 "$tmp/none.err" | grep -q "^error: $tmp/simd.json: backend_options.cpu.simd is \"bogus\"" ||
  fail "the reason does not lead: $(head -1 "$tmp/none.err")"
expect 2 "^error: .*backend_options.cpu.simd is \"bogus\"" -- "$exe" generate -m "$model" -p x -n 1 --config "$tmp/simd.json"

# At debug level the executor logs each node's backend with the reason (was RF_SCHED_DEBUG).
expect 0 "sched: node +0 get_rows .*-> cpu \(where its weights live\)" -- "$exe" -vv generate -m "$model" -p x -n 1 --backend cpu
expect 0 "sched: node" -- env ROCMFORGE_LOG=debug "$exe" generate -m "$model" -p x -n 1 --backend cpu
"$exe" generate -m "$model" -p x -n 1 --backend cpu 2>&1 | grep -q "sched:" && fail "sched: lines without -vv"

# Ctrl-C during generate: the statistics of what was done, exit 130. A long run (-c 65536,
# one thread) is interrupted once its first text is out.
"$exe" generate -m "$model" -p "And" -n -1 --ignore-eos -c 65536 -t 1 --seed 1 >"$tmp/int.out" 2>"$tmp/int.err" &
pid=$!
for _ in $(seq 100); do [ -s "$tmp/int.out" ] && break; sleep 0.1; done
sleep 0.2
kill -INT $pid
wait $pid
rc=$?
[ $rc = 130 ] || fail "generate after Ctrl-C exited $rc, want 130"
grep -q "stopped: interrupted" "$tmp/int.err" || fail "generate after Ctrl-C: no 'interrupted' note"
grep -qE "^generation: +[0-9.]+ ms / +[0-9]+ tokens" "$tmp/int.err" || fail "generate after Ctrl-C printed no statistics"

finish "message"
