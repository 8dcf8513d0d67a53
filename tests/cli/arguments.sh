#!/usr/bin/env bash
# Option values outside their meaning are refused with the option named (exit 2); tokenize
# falls back to the default model like the other commands; perplexity names a directory and a
# too-small -c; bench warns before a test that would run for hours.
# Usage: arguments.sh ROCMFORGE_EXE MODEL TEXT_FILE
set -u
exe=$1
model=$2
text=$3
. "$(dirname "$0")/lib.sh"

gen=("$exe" generate -m "$model" -p x -n 1)
expect 2 "option --top-p must be in \(0, 1\]" -- "${gen[@]}" --top-p 2
expect 2 "option --top-p must be in \(0, 1\]" -- "${gen[@]}" --top-p 0
expect 2 "option --temp must be >= 0" -- "${gen[@]}" --temp -1
expect 2 "option --min-p must be in \[0, 1\]" -- "${gen[@]}" --min-p 1.5
expect 2 "option --min-p must be in \[0, 1\]" -- "${gen[@]}" --min-p -0.1
expect 2 "option --top-k must be in 0\.\." -- "${gen[@]}" --top-k -1
expect 2 "option --repeat-penalty must be > 0" -- "${gen[@]}" --repeat-penalty 0
expect 2 "option --repeat-penalty must be > 0" -- "${gen[@]}" --repeat-penalty -2
expect 2 "option --frequency-penalty must be in \[-2, 2\]" -- "${gen[@]}" --frequency-penalty 2.5
expect 2 "option --presence-penalty must be in \[-2, 2\]" -- "${gen[@]}" --presence-penalty -3
expect 2 "option --candidates needs on or off, got 'maybe'" -- "${gen[@]}" --candidates maybe
expect 2 "option --candidates needs on or off" -- "$exe" bench-inference -m "$model" --candidates 1
# --device takes a GPU index; it selects the hip backend's device and leaves the CPU backend as is.
expect 2 "bad --device 'x'" -- "${gen[@]}" --device x
expect 2 "bad --device '-1'" -- "${gen[@]}" --device -1
expect 0 "^generation:" -- "${gen[@]}" --device 0 --backend cpu
expect 0 "^generation:" -- "${gen[@]}" --device 3 --backend cpu
# NAME:N runs backend NAME on its device N; an index beyond the plugin's devices names them.
expect 0 "^generation:" -- "${gen[@]}" --backend cpu:0
expect 2 "backend 'cpu:1': device 1 is out of range: plugin .* has 1 device \(0: " -- "${gen[@]}" --backend cpu:1
expect 2 "is neither a backend name nor NAME:DEVICE" -- "${gen[@]}" --backend cpu:x
# The edges of each range are accepted.
expect 0 "^generation:" -- "${gen[@]}" --top-p 1 --temp 0 --min-p 0 --top-k 0 --repeat-penalty 1.1
expect 0 "^generation:" -- "${gen[@]}" --frequency-penalty 2 --presence-penalty -2 --candidates off

# tokenize without -m: the default model (the same ids as with -m).
"$exe" tokenize -m "$model" -p "And God said" --ids >"$tmp/with_m.txt" 2>&1 || fail "tokenize -m exited $?"
ROCMFORGE_DEFAULT_MODEL=$model "$exe" tokenize -p "And God said" --ids >"$tmp/default.txt" 2>&1 ||
  fail "tokenize without -m exited $?: $(cat "$tmp/default.txt")"
cmp -s "$tmp/with_m.txt" "$tmp/default.txt" || fail "tokenize without -m: '$(cat "$tmp/default.txt")' vs '$(cat "$tmp/with_m.txt")'"

mkdir -p "$tmp/dir"
expect 2 "'$tmp/dir' is a directory" -- "$exe" perplexity -m "$model" -f "$tmp/dir"
expect 2 "'$tmp/dir' is a directory" -- "$exe" generate -m "$model" -f "$tmp/dir" -n 1
expect 2 "'$tmp/dir' is a directory" -- "$exe" tokenize -m "$model" -f "$tmp/dir"
expect 2 "cannot open '$tmp/none.txt'" -- "$exe" perplexity -m "$model" -f "$tmp/none.txt"
expect 2 "-c 1 is too small.*must be at least 3" -- "$exe" perplexity -m "$model" -f "$text" -c 1
expect 0 "Final estimate" -- "$exe" perplexity -m "$model" -f "$text" -c 3 --chunks 2

# bench warns (on stderr, before loading anything) about a test that would take hours; the
# timeout stops it once the warning is out.
timeout 5 "$exe" bench -m "$model" -p 100000 -n 0 -r 1 >/dev/null 2>"$tmp/long.err"
grep -q "warning: bench: pp100000 runs 100000 tokens" "$tmp/long.err" || fail "bench -p 100000: no warning: $(head -2 "$tmp/long.err")"
"$exe" bench -m "$model" -p 16 -n 4 -r 1 >/dev/null 2>"$tmp/short.err" || fail "bench -p 16 exited $?"
grep -q "warning" "$tmp/short.err" && fail "bench -p 16 warns: $(grep warning "$tmp/short.err")"

finish "argument"
