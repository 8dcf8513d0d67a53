#!/usr/bin/env bash
# rocmforge template: the prompt a conversation renders to, byte for byte what jinja2 renders
# under transformers' settings (tests/chat_templates/render_reference.py), with tools and tool
# results; the built-in chatml for a model without a template (harmony for a gpt-oss one); every bad input a clear exit 2.
# Usage: template.sh ROCMFORGE_EXE MODEL DATA_DIR
set -u
exe=$1
model=$2
data=$3
ref="$(dirname "$0")/../chat_templates/render_reference.py"
. "$(dirname "$0")/lib.sh"
tdir=$data/chat_templates

# The model's BOS / EOS texts, as the template sees them.
printf '%s' '{{ bos_token }}|{{ eos_token }}' >"$tmp/tokens.jinja"
echo '[{"role":"user","content":"x"}]' >"$tmp/one.json"
tokens=$("$exe" template -m "$model" --messages "$tmp/one.json" --chat-template-file "$tmp/tokens.jinja") || fail "template exited $?"
bos=${tokens%%|*} eos=${tokens#*|}
echo "ok: bos_token '$bos', eos_token '$eos'"

if /usr/bin/python3 -c 'import jinja2' 2>/dev/null; then
  conv=$tdir/conversations/tool-call-roundtrip.json
  for t in qwen2.5-instruct.jinja llama-3.1-instruct.jinja hermes-2-pro-tool-use.jinja mistral-7b-instruct-v0.3.jinja; do
    for gen in true false; do
      flag=(); [ $gen = false ] && flag=(--no-generation-prompt)
      "$exe" template -m "$model" --messages "$conv" --chat-template-file "$tdir/$t" "${flag[@]}" >"$tmp/ours.txt" || fail "$t: exit $?"
      /usr/bin/python3 -c "import json,sys; c=json.load(open(sys.argv[1])); c.update(add_generation_prompt=$([ $gen = true ] && echo True || echo False), bos_token=sys.argv[2], eos_token=sys.argv[3], documents=None); c.setdefault('tools', None); json.dump(c, open(sys.argv[4], 'w'))" \
        "$conv" "$bos" "$eos" "$tmp/ctx.json"
      /usr/bin/python3 "$ref" "$tdir/$t" "$tmp/ctx.json" >"$tmp/jinja2.txt" || fail "$t: jinja2 exited $?"
      if cmp -s "$tmp/ours.txt" "$tmp/jinja2.txt"; then echo "ok: $t (add_generation_prompt $gen) = jinja2, $(wc -c <"$tmp/ours.txt") bytes"
      else fail "$t (add_generation_prompt $gen) differs from jinja2"; diff "$tmp/jinja2.txt" "$tmp/ours.txt" | head -5; fi
    done
  done
  # --tools FILE with a bare array of messages gives the same prompt as the object form.
  /usr/bin/python3 -c "import json,sys; c=json.load(open(sys.argv[1])); json.dump(c['messages'], open(sys.argv[2],'w')); json.dump(c['tools'], open(sys.argv[3],'w'))" \
    "$conv" "$tmp/msgs.json" "$tmp/tools.json"
  a=$("$exe" template -m "$model" --messages "$conv" --chat-template-file "$tdir/qwen2.5-instruct.jinja")
  b=$("$exe" template -m "$model" --messages "$tmp/msgs.json" --tools "$tmp/tools.json" --chat-template-file "$tdir/qwen2.5-instruct.jinja")
  [ "$a" = "$b" ] && echo "ok: --tools FILE = the object's tools" || fail "--tools FILE gives another prompt"
else
  echo "python3-jinja2 missing: jinja2 comparison skipped"
fi

# No template in the model (the default model has none): the built-in chatml, said on stderr.
expect 0 "chat template: the model has none; using chatml" -- "$exe" template -m "$model" --messages "$tmp/one.json"
out=$("$exe" template -m "$model" --messages "$tmp/one.json" 2>/dev/null)
[ "$out" = $'<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant' ] && echo "ok: chatml fallback" || fail "chatml fallback: '$out'"
# A gpt-oss file without a template: the family's harmony format (tiny-gpt-oss on the model's vocab).
"$exe" mkmodel --shape tiny-gpt-oss --type F16 --seed 1 --vocab "$model" -o "$tmp/gpt-oss.gguf" -t 2 >/dev/null 2>&1 ||
  fail "mkmodel tiny-gpt-oss exited $?"
expect 0 "using gpt-oss, its family's format" -- "$exe" template -m "$tmp/gpt-oss.gguf" --messages "$tmp/one.json"
out=$("$exe" template -m "$tmp/gpt-oss.gguf" --messages "$tmp/one.json" 2>/dev/null)
[ "$out" = '<|start|>user<|message|>x<|end|><|start|>assistant' ] && echo "ok: gpt-oss's harmony fallback" ||
  fail "harmony fallback: '$out'"
out=$("$exe" template -m "$model" --messages "$tmp/one.json" --chat-template llama3 --no-generation-prompt)
[ "$out" = $'<|start_header_id|>user<|end_header_id|>\n\nx<|eot_id|>' ] && echo "ok: --chat-template llama3" || fail "llama3: '$out'"

# Bad input: exit 2 with the reason.
printf 'line one\n{%% if x %%}\n{{ 1 + }}\n{%% endif %%}\n' >"$tmp/bad.jinja"
expect 2 "does not parse: line 3, column 8: unexpected '}}'" -- "$exe" template -m "$model" --messages "$tmp/one.json" --chat-template-file "$tmp/bad.jinja"
printf '{{ raise_exception("no, " ~ messages[0].role) }}' >"$tmp/raises.jinja"
expect 2 "the chat template raised: no, user" -- "$exe" template -m "$model" --messages "$tmp/one.json" --chat-template-file "$tmp/raises.jinja"
expect 2 "--messages FILE is required" -- "$exe" template -m "$model"
expect 2 "cannot|no such|not found" -- "$exe" template -m "$model" --messages "$tmp/nope.json"
echo '[{"role":"user","content":"x"' >"$tmp/broken.json"
expect 2 "malformed JSON at offset" -- "$exe" template -m "$model" --messages "$tmp/broken.json"
echo '[{"role":"wizard","content":"x"}]' >"$tmp/role.json"
expect 2 "messages\[0\].role' must be system, user, assistant or tool" -- "$exe" template -m "$model" --messages "$tmp/role.json"
echo '{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{}}]}' >"$tmp/noname.json"
expect 2 "tools\[0\].function.name' is required" -- "$exe" template -m "$model" --messages "$tmp/noname.json" --chat-template-file "$tdir/qwen2.5-instruct.jinja"
echo '{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}]}' >"$tmp/tools-chatml.json"
expect 2 "tools need the model's Jinja chat template" -- "$exe" template -m "$model" --messages "$tmp/tools-chatml.json"
expect 2 "not both" -- "$exe" template -m "$model" --messages "$tmp/one.json" --chat-template chatml --chat-template-file "$tmp/bad.jinja"
expect 2 "unknown option" -- "$exe" template --bogus

finish "rocmforge template"
