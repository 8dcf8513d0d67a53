#!/usr/bin/env bash
# Speculative decoding in rocmforge serve: with --draft-ngram 3 (prompt lookup) and with
# --draft-model (the default model drafting for itself), greedy text is the text of a server
# without drafting (one request, 3 concurrent ones, streamed); "timings" has draft_n and
# draft_n_accepted, and /metrics sums them. Sampling with drafts answers with plausible counters.
# A draft model of another vocabulary and bad option values stop the server with a message.
# Usage: serve_speculative.sh ROCMFORGE MODEL TEST_DATA_DIR
set -uo pipefail
rocmforge=$1 model=$2 data=$3
source "$(dirname "$0")/lib_server.sh"
C=(curl -s --max-time 60)

# Verses that repeat: prompt lookup finds its drafts in the prompt and in the output.
prompt="And God said, Let there be light: and there was light. And God saw the light, that it was good. And God said, Let there be"
completion() {
  "${C[@]}" "$URL/v1/completions" -H 'Content-Type: application/json' \
    -d "{\"prompt\":\"$prompt\",\"max_tokens\":48,\"temperature\":0${1:+,$1}}"
}
text() { jq -r '.choices[0].text'; }
# The streamed text and the last chunk's timings ("null" when absent).
streamed() {
  "${C[@]}" -N "$URL/v1/completions" -H 'Content-Type: application/json' \
    -d "{\"prompt\":\"$prompt\",\"max_tokens\":48,\"temperature\":0,\"stream\":true}" |
    sed -n 's/^data: //p' | grep -v '^\[DONE\]' | jq -s -c '{text: (map(.choices[0].text // "") | add), timings: (last | .timings)}'
}
concurrent() {
  local pids=() q
  for q in 1 2 3; do completion >"$tmp/c$q.json" & pids+=($!); done
  wait "${pids[@]}" # not the server's
  for q in 1 2 3; do text <"$tmp/c$q.json"; echo; done
}

start_server plain --parallel 4
ref=$(completion | text)
ref3=$(concurrent)
check "no drafter: no timings" test "$(completion | jq -c .timings)" = null
stop_server plain || fail "plain server exit status"
[ -n "$ref" ] || fail "the reference text is empty"

# speculative NAME ARGS...: the checks for one drafter.
speculative() {
  local name=$1; shift
  start_server "$name" --parallel 4 "$@"
  grep -q "^draft: " "$tmp/$name.log" || fail "$name: the log names the drafter"
  local r n a
  r=$(completion)
  check "$name: greedy text = without drafting" test "$(text <<<"$r")" = "$ref"
  n=$(jq '.timings.draft_n' <<<"$r") a=$(jq '.timings.draft_n_accepted' <<<"$r")
  echo "$name: drafted $n, accepted $a"
  check "$name: timings.draft_n > 0" test "$n" -gt 0
  check "$name: 0 < timings.draft_n_accepted <= draft_n" test "$a" -gt 0 -a "$a" -le "$n"
  check "$name: /metrics counts the drafts ($n, $a)" \
    test "$(metric rocmforge_draft_tokens_total) $(metric rocmforge_draft_accepted_tokens_total)" = "$n $a"
  check "$name: 3 concurrent greedy requests = without drafting" test "$(concurrent)" = "$ref3"
  local s
  s=$(streamed)
  check "$name: streamed greedy text = without drafting" test "$(jq -r .text <<<"$s")" = "$ref"
  check "$name: the last streamed chunk has the timings" test "$(jq '.timings.draft_n > 0' <<<"$s")" = true
  # Sampling: the acceptance rule keeps the distribution, not the tokens; plausible counters.
  r=$(completion '"temperature":0.8,"seed":11')
  check "$name: sampling answers with 48 tokens" test "$(jq .usage.completion_tokens <<<"$r")" = 48
  check "$name: sampling's counters plausible" \
    jq -e '.timings.draft_n > 0 and .timings.draft_n_accepted >= 0 and .timings.draft_n_accepted <= .timings.draft_n' <<<"$r" >/dev/null
  # Logprobs are not drafted for: such a request decodes as without a drafter.
  r=$(completion '"logprobs":2')
  check "$name: a logprobs request = without drafting, no timings" test "$(text <<<"$r") $(jq -c .timings <<<"$r")" = "$ref null"
  # One batch mixing them: greedy with drafts, sampling with drafts, logprobs without.
  local pids=()
  completion >"$tmp/m1.json" & pids+=($!)
  completion '"temperature":0.8,"seed":5' >"$tmp/m2.json" & pids+=($!)
  completion '"logprobs":2' >"$tmp/m3.json" & pids+=($!)
  completion '"n":2' >"$tmp/m4.json" & pids+=($!)
  wait "${pids[@]}" # not the server's
  check "$name: mixed batch: greedy, logprobs and n=2 texts = without drafting" \
    test "$(text <"$tmp/m1.json") $(text <"$tmp/m3.json") $(jq -r '.choices[1].text' <"$tmp/m4.json")" = "$ref $ref $ref"
  check "$name: mixed batch: the sampled one has 48 tokens" test "$(jq .usage.completion_tokens <"$tmp/m2.json")" = 48
  stop_server "$name" || fail "$name server exit status"
}
speculative ngram --draft-ngram 3
speculative ngram-max1 --draft-ngram 3 --draft-max 1
# Greedy rows read back as candidates (sampling with drafts then asks for whole rows).
speculative ngram-candidates --draft-ngram 3 --candidates always
speculative model --draft-model "$model" --draft-max 4

# Refused at start, with a message and a non-zero exit.
refused() { # refused DESCRIPTION PATTERN ARGS...
  local what=$1 pattern=$2; shift 2
  local out rc
  out=$(timeout 60 "$rocmforge" serve -m "$model" --port 0 "$@" 2>&1); rc=$?
  check "$what: refused (exit $rc)" test "$rc" -ne 0 -a "$rc" -ne 124
  check "$what: says why" grep -q -- "$pattern" <<<"$out"
}
"$rocmforge" mkmodel --shape tiny --type F16 --vocab "$data/vocab/ggml-vocab-llama-spm.gguf" -o "$tmp/spm.gguf" \
  --seed 1 -t 2 --ctx 512 >/dev/null 2>&1 || fail "mkmodel"
refused "a draft model of another vocabulary" "speculative decoding needs the same vocabulary" --draft-model "$tmp/spm.gguf"
refused "--draft-max 0" "option --draft-max must be in 1..64, got 0" --draft-ngram 3 --draft-max 0
refused "--draft-max -2" "option --draft-max must be in 1..64, got -2" --draft-ngram 3 --draft-max -2
refused "--draft-max abc" "option --draft-max needs an integer, got 'abc'" --draft-ngram 3 --draft-max abc
refused "--draft-ngram 0" "option --draft-ngram must be in 1..16, got 0" --draft-ngram 0
refused "both drafters" "give one of --draft-model and --draft-ngram" --draft-ngram 3 --draft-model "$model"
refused "a missing draft model" "no-such.gguf" --draft-model "$tmp/no-such.gguf"
finish "serve (speculative decoding)"
