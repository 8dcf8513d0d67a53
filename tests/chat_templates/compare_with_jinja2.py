#!/usr/bin/python3
"""Every published template in tests/data/chat_templates with every conversation, rendered by
our engine (RENDER: the jinja-render test program) and by jinja2 as transformers renders it
(render_reference.py), with and without the generation prompt: the prompts must be equal byte
for byte, and a template that raises must raise the same message in both.

usage: compare_with_jinja2.py RENDER DATA_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import render_reference  # noqa: E402


def ours(render, template, context):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as f:
        json.dump(context, f, ensure_ascii=False)
        path = f.name
    try:
        p = subprocess.run([render, template, path], capture_output=True, timeout=60)
    finally:
        os.unlink(path)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace").strip()


def main():
    render, data = sys.argv[1], sys.argv[2]
    tdir = os.path.join(data, "chat_templates")
    with open(os.path.join(tdir, "templates.json"), encoding="utf-8") as f:
        templates = json.load(f)
    cdir = os.path.join(tdir, "conversations")
    conversations = sorted(n for n in os.listdir(cdir) if n.endswith(".json"))
    failures = 0
    for name, tokens in sorted(templates.items()):
        path = os.path.join(tdir, name)
        with open(path, encoding="utf-8") as f:
            source = f.read()
        same = rendered = raised = 0
        for conv in conversations:
            with open(os.path.join(cdir, conv), encoding="utf-8") as f:
                base = json.load(f)
            for gen in (True, False):
                # As transformers: tools and documents are None when the conversation has none.
                context = dict({"tools": None, "documents": None}, **base, add_generation_prompt=gen, **tokens)
                case = "%s + %s (add_generation_prompt=%s)" % (name, conv, gen)
                try:
                    want, want_err = render_reference.render(source, json.loads(json.dumps(context))), None
                except render_reference.TemplateRaised as e:
                    want, want_err = None, "raised: %s" % e
                except Exception as e:  # jinja2's own errors: we must fail too
                    want, want_err = None, "error: %s: %s" % (type(e).__name__, e)
                rc, got, err = ours(render, path, context)
                if want is not None:
                    ok = rc == 0 and got == want
                    rendered += ok
                elif want_err.startswith("raised:"):
                    ok = rc == 3 and err == want_err
                    raised += ok
                else:
                    ok = rc not in (0, 3) and err != ""
                    raised += ok
                if ok:
                    same += 1
                    continue
                failures += 1
                print("MISMATCH %s" % case)
                if want is not None and rc == 0:
                    i = next((k for k in range(min(len(got), len(want))) if got[k] != want[k]), min(len(got), len(want)))
                    print("  first difference at byte %d:\n  jinja2: %r\n  ours:   %r" % (i, want[max(0, i - 40):i + 40], got[max(0, i - 40):i + 40]))
                else:
                    print("  jinja2: %s\n  ours (exit %d): %s" % (want_err or repr(want[:200]), rc, err or repr(got[:200])))
        total = len(conversations) * 2
        print("%-34s %3d/%d identical (%d rendered, %d raised or failed alike)" % (name, same, total, rendered, raised))
    if failures:
        print("%d case(s) differ from jinja2" % failures)
        sys.exit(1)
    print("all %d templates match jinja2 byte for byte" % len(templates))


if __name__ == "__main__":
    main()
