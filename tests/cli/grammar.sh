#!/usr/bin/env bash
# generate --json-schema / --grammar-file: the text after the prompt follows the schema (checked
# with jq rules written from the schema) or the grammar, for several seeds and 4 sequences at
# once; a grammar or schema it cannot use is refused before loading, exit 2, naming the line and
# column or the keyword. Usage: grammar.sh ROCMFORGE_EXE MODEL
set -u
exe=$1
model=$2
. "$(dirname "$0")/lib.sh"

cat >"$tmp/schema.json" <<'JSON'
{"type": "object", "properties": {"n": {"type": "integer"}, "who": {"enum": ["Moses", "Aaron"]},
 "words": {"type": "array", "items": {"type": "string", "maxLength": 5}, "maxItems": 2}},
 "required": ["n", "who"], "additionalProperties": false}
JSON
rules='(.n | type == "number" and floor == .) and (.who == "Moses" or .who == "Aaron") and
  ((.words // []) | length <= 2 and all(type == "string" and length <= 5)) and (keys - ["n", "who", "words"] == [])'
for seed in 1 2 3 4; do
  out=$("$exe" generate -m "$model" -p "Q:" -n 600 --seed $seed --json-schema "$tmp/schema.json" 2>/dev/null)
  if [ "$(printf '%s' "${out#Q:}" | jq "$rules" 2>&1)" = true ]; then echo "ok: seed $seed valid"; else fail "seed $seed: $out"; fi
done
"$exe" generate -m "$model" -p "Q:" -n 600 -c 4096 --seed 9 --parallel 4 --json-schema "$tmp/schema.json" >"$tmp/par.out" 2>/dev/null ||
  fail "--parallel 4 exited $?"
n_valid=0
for s in 0 1 2 3; do
  text=$(awk -v s="--- sequence $s ---" '$0 == s { on = 1; next } /^--- sequence/ { on = 0 } on' "$tmp/par.out")
  [ "$(printf '%s' "${text#Q:}" | jq "$rules" 2>/dev/null)" = true ] && n_valid=$((n_valid + 1))
done
[ $n_valid = 4 ] && echo "ok: 4 parallel sequences valid" || { fail "parallel: $n_valid of 4 valid"; cat "$tmp/par.out"; }

printf 'root ::= "Verse " [1-9] [0-9]? ": " ("yea" | "nay") "."\n' >"$tmp/verse.gbnf"
out=$("$exe" generate -m "$model" -p "Q:" -n 50 --seed 5 --grammar-file "$tmp/verse.gbnf" 2>/dev/null)
grep -qxE 'Q:Verse [1-9][0-9]?: (yea|nay)\.' <<<"$out" && echo "ok: GBNF: $out" || fail "GBNF output: $out"

printf 'root ::= item\nitem ::= "a" | [b-' >"$tmp/bad.gbnf"
expect 2 "line 2, column 19: unterminated character class" -- "$exe" generate -m "$model" --grammar-file "$tmp/bad.gbnf"
echo '{"type": "string", "format": "uri"}' >"$tmp/bad.json"
expect 2 "the format 'uri' is not supported" -- "$exe" generate -m "$model" --json-schema "$tmp/bad.json"
expect 2 "json schema: not JSON" -- "$exe" generate -m "$model" --json-schema "$tmp/bad.gbnf"
expect 2 "give one of --grammar-file and --json-schema" -- "$exe" generate -m "$model" --json-schema "$tmp/schema.json" --grammar-file "$tmp/verse.gbnf"
expect 2 "cannot|no such|not found|open" -- "$exe" generate -m "$model" --json-schema "$tmp/missing.json"
finish "generate with a grammar"
