#!/usr/bin/env bash
# Automatic prefix caching in rocmforge serve: a second request that shares a long prefix with
# an ended one reports prefix-cache hits in /metrics and gives the same text and logprobs as a
# server with --no-prefix-cache; so do n > 1 choices and concurrent requests sharing the prefix.
# Usage: serve_prefix_cache.sh ROCMFORGE MODEL
set -uo pipefail
rocmforge=$1 model=$2
source "$(dirname "$0")/lib_server.sh"
C=(curl -s --max-time 60)

system="In the beginning God created the heaven and the earth. And the earth was without form, and void; and darkness was upon the face of the deep. And the Spirit of God moved upon the face of the waters. And God said, Let there be light: and there was light. And God saw the light, that it was good: and God divided the light from the darkness. And God called the light Day, and the darkness he called Night. And the evening and the morning were the first day."
# completion QUESTION [EXTRA_JSON]: the shared prefix + QUESTION, greedy, with logprobs.
completion() {
  "${C[@]}" "$URL/v1/completions" -H 'Content-Type: application/json' \
    -d "{\"prompt\":\"$system $1\",\"max_tokens\":12,\"temperature\":0,\"logprobs\":3${2:+,$2}}"
}
# The texts and the logprobs rounded to 1e-3 (float tolerance between two prefills).
summary() { jq -c '[.choices[] | {text, lp: [.logprobs.token_logprobs[] | . * 1000 | round]}]'; }
n_tokens=$("$rocmforge" tokenize -m "$model" -p "$system" --ids | jq length)

# Reference: caching off. Nothing looked up.
start_server off --parallel 4 --no-prefix-cache
grep -q "prefix cache off" "$tmp/off.log" || fail "--no-prefix-cache: the log says the cache is off"
ref1=$(completion "And God said" | summary)
ref2=$(completion "Who divided the light?" | summary)
refn=$(completion "Let there be" '"n":2,"temperature":0.8,"seed":7' | summary)
check "off: no lookups" test "$(metric rocmforge_prefix_cache_lookups_total)" = 0
stop_server off || fail "off server exit status"

start_server on --parallel 4
grep -q "prefix cache on" "$tmp/on.log" || fail "the log says the prefix cache is on"
check "first request = caching off" test "$(completion "And God said" | summary)" = "$ref1"
check "first request: a lookup, no hit" test "$(metric rocmforge_prefix_cache_lookups_total) $(metric rocmforge_prefix_cache_hits_total)" = "1 0"
check "the ended request's pages stay cached" test "$(metric rocmforge_kv_pages_cached)" -gt 0
r2=$(completion "Who divided the light?" | summary)
check "second request (shared prefix) = caching off" test "$r2" = "$ref2"
hits=$(metric rocmforge_prefix_cache_hits_total) cached=$(metric rocmforge_prefix_cache_cached_tokens_total)
check "second request: a hit" test "$hits" = 1
# Whole 16-token pages of the shared prefix ($n_tokens tokens, BOS included) were not prefilled.
check "cached tokens: the prefix's whole pages ($cached of $n_tokens)" test "$cached" -ge $(( (n_tokens - 16) / 16 * 16 )) -a "$cached" -le "$n_tokens"
# n = 2 after them: both choices map the cached prefix.
check "n=2 sampled choices = caching off" test "$(completion "Let there be" '"n":2,"temperature":0.8,"seed":7' | summary)" = "$refn"
# Concurrent requests sharing the prefix, batched together: each as alone.
pids=()
for q in 1 2 3; do completion "And God said" >"$tmp/c$q.json" & pids+=($!); done
wait "${pids[@]}" # not the server's
same=1
for q in 1 2 3; do [ "$(summary <"$tmp/c$q.json")" = "$ref1" ] || same=0; done
check "3 concurrent requests with the shared prefix = caching off" test $same = 1
check "lookups: every prompt (1 + 1 + 2 + 3)" test "$(metric rocmforge_prefix_cache_lookups_total)" = 7
check "hits: all but the first" test "$(metric rocmforge_prefix_cache_hits_total)" = 6
stop_server on || fail "on server exit status"

# n = 2 on an empty cache: the choices start together, the second waits for the first's prefill
# and maps its pages instead of computing them too.
start_server fresh --parallel 4
check "n=2 on an empty cache = caching off" test "$(completion "Let there be" '"n":2,"temperature":0.8,"seed":7' | summary)" = "$refn"
check "n=2 on an empty cache: the second choice hits" test "$(metric rocmforge_prefix_cache_lookups_total) $(metric rocmforge_prefix_cache_hits_total)" = "2 1"
stop_server fresh || fail "fresh server exit status"

out=$("$rocmforge" serve -m "$model" --no-prefix-cache=yes 2>&1)
check "a value for --no-prefix-cache is refused by name" grep -q "unknown option '--no-prefix-cache=yes'" <<<"$out"
finish "serve (prefix cache)"
