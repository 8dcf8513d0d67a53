# Helpers shared by the CLI test scripts (sourced): a scratch folder removed at exit, failure
# counting, and expect CODE PATTERN -- command... (exit code and a line of output matching an
# extended regex, case-insensitive; stdin is /dev/null so nothing waits for input).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

expect() {
  local code=$1 pattern=$2
  shift 3
  local out rc
  out=$("$@" 2>&1 </dev/null)
  rc=$?
  if [ "$rc" != "$code" ] || ! grep -qiE -- "$pattern" <<<"$out"; then
    fail "$* -> exit $rc (want $code, message matching '$pattern')"
    echo "$out" | head -5 | sed 's/^/    /'
  else
    echo "ok: exit $rc: $(grep -iE -m1 -- "$pattern" <<<"$out")"
  fi
}

# Prints the summary line and exits 1 when a check failed. Usage: finish "CLI error cases"
finish() {
  [ "$fails" = 0 ] && echo "$1: all checks passed" || { echo "$fails $1 check(s) failed"; exit 1; }
}
