#!/usr/bin/python3
"""Render a chat template the way Hugging Face transformers' apply_chat_template does.

transformers (chat_template_utils.py) compiles the template in
ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with the loop-controls
extension, overrides tojson with json.dumps(ensure_ascii=False, ...) and adds the globals
raise_exception and strftime_now; the conversation, tools, add_generation_prompt and the special
tokens are the template's variables. Only Debian's python3-jinja2 is needed (no transformers).

usage: render_reference.py TEMPLATE CONTEXT.json   (prints the prompt, no newline added;
       a template that raises: exit 3 with "raised: MESSAGE" on stderr)
"""
import json
import sys
from datetime import datetime

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


class TemplateRaised(Exception):
    pass


def raise_exception(message):
    raise TemplateRaised(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(format):
    return datetime.now().strftime(format)


def render(source, context):
    """The prompt; raises TemplateRaised for raise_exception, jinja2's errors otherwise."""
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env.from_string(source).render(**context)


def main():
    template_path, context_path = sys.argv[1], sys.argv[2]
    with open(template_path, encoding="utf-8") as f:
        source = f.read()
    with open(context_path, encoding="utf-8") as f:
        context = json.load(f)
    try:
        out = render(source, context)
    except TemplateRaised as e:
        sys.stderr.write("raised: %s\n" % e)
        sys.exit(3)
    sys.stdout.write(out)


if __name__ == "__main__":
    main()
