# The templates and contexts of test_jinja.cpp's expectations (the third field unused): run
# `python3 cases.py` to print what jinja2 renders for each, the texts test_jinja.cpp expects.
CASES = [
 ("{{ 1 + 2 * 3 }}|{{ (1 + 2) * 3 }}|{{ 7 // 2 }}|{{ -7 // 2 }}|{{ 7 % 3 }}|{{ -7 % 3 }}|{{ 2 ** 10 }}|{{ 7 / 2 }}|{{ 1 / 3 }}", {}, None),
 ("{{ 'a' ~ 1 ~ none }}|{{ 'ab' * 3 }}|{{ [1, 2] + [3] }}|{{ 1.0 }}|{{ 1e-05 }}|{{ 1e16 }}|{{ 0.1 + 0.2 }}|{{ 3 == 3.0 }}", {}, None),
 ("{{ true and 'x' }}|{{ false or 0 }}|{{ not none }}|{{ 1 < 2 < 3 }}|{{ 'b' in 'abc' }}|{{ 2 not in [1, 3] }}|{{ 'x' if false }}|{{ 'y' if 0 else 'z' }}", {}, None),
 ("{{ x }}|{{ x is defined }}|{{ d.a }}|{{ d['b'] }}|{{ d.missing is defined }}|{{ l[-1] }}|{{ l[1:] }}|{{ l[::-1] }}|{{ s[1:3] }}|{{ s[::-1] }}", {"d": {"a": 1, "b": [1, "two"]}, "l": [1, 2, 3], "s": "héllo"}, None),
 ("{{ '  a b  '|trim }}|{{ 'xxaxx'|trim('x') }}|{{ 'Hi'|upper }}{{ 'Hi'|lower }}|{{ 'héllo'|length }}|{{ [3, 1]|first }}{{ [3, 1]|last }}|{{ [1, 2, 3]|join('-') }}|{{ 'aaa'|replace('a', 'b', 2) }}", {}, None),
 ("{{ u|default('dflt') }}|{{ ''|default('e', true) }}|{{ none|default('n') }}|{{ d|items|list }}|{{ d|dictsort }}|{{ '42'|int + 1 }}|{{ '4.7'|int }}|{{ 'x'|int(7) }}|{{ 3|float }}|{{ 12|string ~ '!' }}", {"d": {"b": 2, "a": 1}}, None),
 ("{{ ms|selectattr('role', 'equalto', 'user')|map(attribute='content')|join(',') }}|{{ ms|rejectattr('role', 'eq', 'user')|list|length }}|{{ ms|map(attribute='content')|map('upper')|list }}|{{ ms|selectattr('tool')|list|length }}|{{ [1, 2, 3, 4]|select('even')|list }}", {"ms": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "tool": 1}, {"role": "user", "content": "c"}]}, None),
 ("{{ 'line1\nline2\n\nline4'|indent(2) }}|{{ 'a\nb'|indent(4, true) }}|{{ 'a\n\nb'|indent(2, blank=true) }}", {}, None),
 ("{{ v|tojson }}|{{ v|tojson(indent=2) }}|{{ 'é\"\\\n'|tojson }}|{{ v|tojson(sort_keys=true, separators=[',', ':']) }}", {"v": {"b": [1, 2.5, True, None], "a": {}, "c": []}}, None),
 ("{{ ' Hello World '.strip() }}|{{ 'abc'.startswith('a') }}{{ 'abc'.endswith(('x', 'c')) }}|{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'a b c'.split(' ', 1) }}|{{ 'AbC'.lower() }}{{ 'abc'.upper() }}|{{ 'a-a'.replace('-', '+') }}|{{ 'hello world'.title() }}|{{ 'x\n'.rstrip('\n') }}|{{ '<think>a</think>b'.split('</think>')[-1] }}", {}, None),
 ("{{ d.get('a') }}|{{ d.get('z', 'none here') }}|{{ d.get('z') }}|{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}|{{ d.keys()|list }}|{{ d.values()|list }}|{{ 'a' in d }}", {"d": {"a": 1, "b": "x"}}, None),
 ("{% for x in l %}{{ loop.index }}/{{ loop.index0 }}/{{ loop.revindex }}/{{ loop.first }}/{{ loop.last }}/{{ loop.length }}/{{ loop.previtem }}/{{ loop.nextitem }};{% endfor %}", {"l": ["a", "b", "c"]}, None),
 ("{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 5 %}{% break %}{% endif %}{{ x }}{% endfor %}|{% for x in [] %}no{% else %}empty{% endfor %}|{% for x in range(6) if x is odd %}{{ x }}{{ loop.length }}{% endfor %}|{% for x in 'ab' %}{{ loop.cycle('+', '-') }}{{ x }}{% endfor %}", {}, None),
 ("{% set ns = namespace(n=0, found=false) %}{% for i in range(4) %}{% set ns.n = ns.n + i %}{% set local = i %}{% endfor %}{{ ns.n }}|{{ local is defined }}|{% if true %}{% set inner = 'kept' %}{% endif %}{{ inner }}|{% set a, b = 1, 2 %}{{ a + b }}|{% set blk %}x{{ 1 }}y{% endset %}{{ blk }}", {}, None),
 ("{% macro greet(name, punct='!') %}Hello {{ name }}{{ punct }}{% endmacro %}{{ greet('Ann') }}|{{ greet('Bo', punct='?') }}|{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1)|int }}{% endif %}{% endmacro %}{{ fact(5) }}", {}, None),
 ("{{ x is none }}|{{ x is not none }}|{{ 's' is string }}|{{ {} is mapping }}|{{ [] is iterable }}|{{ 1 is number }}|{{ 1 is integer }}|{{ 1.5 is float }}|{{ true is boolean }}|{{ 6 is divisibleby 3 }}|{{ 4 is even }}|{{ 'ab' is lower }}|{{ x is sameas none }}|{{ y is undefined }}", {"x": None}, None),
 ("a\n  {% if true %}\n  b\n  {% endif %}\nc\n  {# comment #}\nd {%- if true %} e {% endif -%} f\n{{- ' g ' -}}\nh {% raw %}{{ not }}{% endraw %}\n", {}, None),
 ("{%- for m in ms -%}\n  [{{ m }}]\n{%- endfor %}\n  {%+ if true %}kept{% endif +%}\nend", {"ms": [1, 2]}, None),
 ("{{ 'x'|center(5) }}|{{ [3, 1, 2]|sort }}|{{ [3, 1, 2]|sort(reverse=true) }}|{{ ['b', 'A', 'c']|sort }}|{{ [1, 2, 2, 3]|unique|list }}|{{ [1, 2]|reverse|list }}|{{ [1, 2, 3]|sum }}|{{ [4, 2]|min }}{{ [4, 2]|max }}|{{ -3|abs }}|{{ 2.567|round(2) }}|{{ 'a b c'|wordcount }}|{{ '<a>'|e }}|{{ 'x'|safe }}|{{ 'ab'|list }}|{{ 'hello'|capitalize }}", {}, None),
 ("{{ '%s-%d-%5.2f|%-4s|%04d|%x|%r|%%|%.2s' % ('a', 3.9, 2.345, 'b', 7, 255, 'q', 'xyz') }}|{{ '%(k)s=%(v)d' % {'k': 'n', 'v': 2} }}|{{ '%s' | format([1, 'a']) }}|{{ '%s and %s'|format('x', none) }}|{{ '%+d %e %g' % (5, 12345.678, 0.0001) }}", {}, None),
 ("{{ '{}-{}'.format('a', 1) }}|{{ '{0}{1}{0}'.format('x', 'y') }}|{{ '{name}={v!r}'.format(name='k', v='q') }}|{{ '{:>5}|{:<4}|{:^7}|{:*^9}'.format('r', 'l', 'c', 'm') }}|{{ '{:05d}|{:+d}|{:,}|{:x}|{:#b}'.format(42, 7, 1234567, 255, 5) }}|{{ '{:.2f}|{:8.3f}|{:e}|{:.1%}|{}'.format(3.14159, 2.5, 12345.678, 0.256, 1.5) }}|{{ '{{}}{}'.format(none) }}|{{ '{0[a]} {0[b][1]} {1.role}'.format({'a': 1, 'b': [2, 3]}, {'role': 'user'}) }}|{{ '{:.3}'.format('abcdef') }}|{{ '{}'.format([1, 'a']) }}", {}, None),
 ("{{ {'a': 1, 'b': [1, 'x', none, true, 1.5]} }}|{{ ('a', 1) }}|{{ [\"it's\"] }}|{{ none }}|{{ true }}", {}, None),
]

if __name__ == "__main__":
    import os, sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "chat_templates"))
    import render_reference
    for t, ctx, _ in CASES:
        print(repr(render_reference.render(t, ctx)))
