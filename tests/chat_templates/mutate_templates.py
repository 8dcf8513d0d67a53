#!/usr/bin/python3
"""Hostile and broken templates: the published templates cut, spliced and with bytes changed
at random (fixed seed), each rendered by our engine (RENDER: jinja-render) with a tool-call
conversation. Every run must end by itself with a rendered prompt (exit 0), a raised message
(3), a template error (1) or a syntax error (2): never a crash (a signal), never a hang.

usage: mutate_templates.py RENDER DATA_DIR [CASES [SEED]]
"""
import json
import os
import random
import subprocess
import sys
import tempfile
import time

TOKENS = ["{{", "}}", "{%", "%}", "{#", "#}", "{%-", "-%}", "(", ")", "[", "]", "{", "}", "|", "~", "+", "*", "**",
          " if ", " else ", " for x in ", " endfor ", " endif ", " macro m(a) ", " endmacro ", "m(m(1))", "'", '"', "\\",
          "loop.", "ns.", " is ", " not ", " in ", "range(99999)", "* 9999999", "|tojson", "|join", "\n", "\x00", "é"]


def mutate(rng, source, others):
    s = source
    for _ in range(rng.randint(1, 6)):
        kind = rng.randrange(5)
        pos = rng.randrange(len(s) + 1)
        if kind == 0 and s:  # cut
            s = s[:pos] + s[pos + rng.randint(1, 40):]
        elif kind == 1:  # insert a token
            s = s[:pos] + rng.choice(TOKENS) + s[pos:]
        elif kind == 2:  # splice in a piece of another template
            o = rng.choice(others)
            a = rng.randrange(len(o) + 1)
            s = s[:pos] + o[a:a + rng.randint(1, 200)] + s[pos:]
        elif kind == 3 and s:  # change a character
            s = s[:pos] + chr(rng.randrange(32, 127)) + s[pos + 1:]
        else:  # duplicate a stretch (deeper nesting)
            a = rng.randrange(len(s) + 1)
            s = s[:pos] + s[a:a + rng.randint(1, 300)] * rng.randint(1, 20) + s[pos:]
    return s


def main():
    render, data = sys.argv[1], sys.argv[2]
    cases = int(sys.argv[3]) if len(sys.argv) > 3 else 400
    tdir = os.path.join(data, "chat_templates")
    sources = [open(os.path.join(tdir, n), encoding="utf-8").read() for n in sorted(os.listdir(tdir)) if n.endswith(".jinja")]
    with open(os.path.join(tdir, "conversations", "parallel-tool-calls.json"), encoding="utf-8") as f:
        context = dict(json.load(f), add_generation_prompt=True, bos_token="<s>", eos_token="</s>", documents=None)
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 20261202)
    work = tempfile.mkdtemp()
    ctx_path = os.path.join(work, "ctx.json")
    with open(ctx_path, "w", encoding="utf-8") as f:
        json.dump(context, f)
    counts = {}
    slowest = 0.0
    bad = 0
    for i in range(cases):
        tmpl = mutate(rng, rng.choice(sources), sources)
        path = os.path.join(work, "t.jinja")
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(tmpl)
        start = time.monotonic()
        try:
            p = subprocess.run([render, path, ctx_path], capture_output=True, timeout=30)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        slowest = max(slowest, time.monotonic() - start)
        counts[rc] = counts.get(rc, 0) + 1
        if rc not in (0, 1, 2, 3):
            bad += 1
            keep = os.path.join(work, "case%d.jinja" % i)
            os.rename(path, keep)
            print("case %d: exit %s (kept in %s)" % (i, rc, keep))
    print("%d mutated templates: exits %s, slowest %.2f s" % (cases, dict(sorted(counts.items(), key=str)), slowest))
    if bad:
        sys.exit(1)


if __name__ == "__main__":
    main()
