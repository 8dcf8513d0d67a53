#!/usr/bin/env bash
# Fuzzing: builds the libFuzzer targets of tests/fuzz (clang-15, ASan+UBSan) into build-fuzz and
# runs each one after the other from its committed seeds (tests/fuzz/corpus/<target>). A crash,
# sanitizer report, leak, input slower than 10 s (hang) or more than 2 GiB of memory fails the run;
# the input is saved as build-fuzz/fuzz-findings/<target>/{crash,leak,timeout,oom}-<sha1>.
# Usage: scripts/fuzz.sh [-t SECONDS] [-r RUNS] [-b BUILD_DIR] [TARGET...]
#   -t SECONDS  time per target (default 300)
#   -r RUNS     also stop a target after RUNS executions (default: time only)
#   -b DIR      the build folder (default build-fuzz; one configured here if it has none; .ci/run
#               passes its sanitizer build, configured with -Dfuzz=true, so nothing is built twice)
#   TARGET      gguf tokenizer_vocab tokenizer_text config pack_claim serve_request (default: all)
# New inputs that reach new code go to build-fuzz/fuzz-corpus/<target> and are reused next time.
# Reproduce a finding: build-fuzz/tests/fuzz/fuzz_<target> FILE
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=300
runs=-1
build=build-fuzz
while getopts "t:r:b:" opt; do
  case $opt in
    t) seconds=$OPTARG ;;
    r) runs=$OPTARG ;;
    b) build=$OPTARG ;;
    *) sed -n '2,13p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(gguf tokenizer_vocab tokenizer_text config pack_claim serve_request)

scripts/install_missing.sh clang-15 libclang-common-15-dev
# The GPU plugins are not fuzzed (their claim binding is built into fuzz_pack_claim).
if [ -f "$build/build.ninja" ] && ! grep -q -- '-fsanitize=fuzzer-no-link' "$build/build.ninja"; then
  echo "fuzz.sh: $build is not configured with -Dfuzz=true (clang, ASan+UBSan)" >&2
  exit 2
fi
if [ ! -f "$build/build.ninja" ]; then
  CC=clang-15 CXX=clang++-15 meson setup "$build" -Dfuzz=true -Dbuildtype=debugoptimized \
    -Db_sanitize=address,undefined -Db_lundef=false -Dhip_amd=disabled -Dhip_nvidia=disabled
fi
ninja -C "$build" fuzz

export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions=$PWD/tests/fuzz/ubsan.supp
failed=()
for t in "${targets[@]}"; do
  exe=$build/tests/fuzz/fuzz_$t
  [ -x "$exe" ] || { echo "unknown fuzz target '$t'" >&2; exit 2; }
  corpus=$build/fuzz-corpus/$t findings=$build/fuzz-findings/$t log=$build/fuzz-logs/$t.log
  mkdir -p "$corpus" "$findings" "$(dirname "$log")"
  # The outer timeout catches a hang libFuzzer itself cannot report (e.g. in its own start-up).
  rc=0
  timeout --signal=KILL $((seconds + 120)) "$exe" -max_total_time="$seconds" -runs="$runs" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$findings/" \
    "$corpus" "tests/fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
  if [ $rc = 0 ]; then
    echo "fuzz_$t: ok, ${execs:-?} executions in ${secs:-?} s, corpus $(ls "$corpus" | wc -l) files"
  else
    failed+=("$t")
    echo "fuzz_$t: FAILED (exit $rc) after ${execs:-?} executions; log $log:"
    grep -E "ERROR|SUMMARY|Test unit written|fuzz invariant|deadly signal|uncaught exception|terminate called" "$log" | head -20 || tail -30 "$log"
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing found problems in: ${failed[*]}" >&2
  exit 1
fi
