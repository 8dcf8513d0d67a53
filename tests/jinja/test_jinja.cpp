// The Jinja engine on its own: expressions, filters, tests, methods, statements and whitespace
// control (expected texts are jinja2 3.1's under transformers' settings; cases.py checks them
// against jinja2), errors with their line and column, and the limits that keep a hostile
// template from hanging the server or exhausting its stack and memory.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "rocmforge/jinja.h"

using rf::jinja::Limits;
using rf::jinja::Template;
using rf::jinja::TemplateError;
using rf::jinja::Value;

namespace {

std::string render(const std::string &tmpl, const std::string &context_json = "{}", const Limits &limits = {}) {
    return Template::parse(tmpl).render(rf::jinja::from_json(context_json), limits);
}

// The error a template gives, parsing or rendering; fails the test when there is none.
TemplateError error_of(const std::string &tmpl, const std::string &context_json = "{}", const Limits &limits = {}) {
    try {
        render(tmpl, context_json, limits);
    } catch (const TemplateError &e) {
        return e;
    }
    FAIL("no error from: " << tmpl.substr(0, 80));
    throw;
}

} // namespace

TEST_CASE("expressions: arithmetic, comparison, logic, literals", "[jinja]") {
    CHECK(render("{{ 1 + 2 * 3 }}|{{ (1 + 2) * 3 }}|{{ 7 // 2 }}|{{ -7 // 2 }}|{{ 7 % 3 }}|{{ -7 % 3 }}|{{ 2 ** 10 }}|{{ 7 / 2 }}|{{ 1 / 3 }}") ==
          "7|9|3|-4|1|2|1024|3.5|0.3333333333333333");
    CHECK(render("{{ 'a' ~ 1 ~ none }}|{{ 'ab' * 3 }}|{{ [1, 2] + [3] }}|{{ 1.0 }}|{{ 1e-05 }}|{{ 1e16 }}|{{ 0.1 + 0.2 }}|{{ 3 == 3.0 }}") ==
          "a1None|ababab|[1, 2, 3]|1.0|1e-05|1e+16|0.30000000000000004|True");
    CHECK(render("{{ true and 'x' }}|{{ false or 0 }}|{{ not none }}|{{ 1 < 2 < 3 }}|{{ 'b' in 'abc' }}|{{ 2 not in [1, 3] }}|"
                 "{{ 'x' if false }}|{{ 'y' if 0 else 'z' }}") == "x|0|True|True|True|True||z");
    CHECK(render("{{ {'a': 1, 'b': [1, 'x', none, true, 1.5]} }}|{{ ('a', 1) }}|{{ [\"it's\"] }}|{{ none }}|{{ true }}") ==
          "{'a': 1, 'b': [1, 'x', None, True, 1.5]}|('a', 1)|[\"it's\"]|None|True");
    CHECK(render(R"({{ "a\tb\n" ~ 'c\'d' ~ "\u00e9\x41" }})") == "a\tb\nc'd\xc3\xa9"
                                                                  "A");
}

TEST_CASE("variables, attributes, subscripts and slices", "[jinja]") {
    CHECK(render("{{ x }}|{{ x is defined }}|{{ d.a }}|{{ d['b'] }}|{{ d.missing is defined }}|{{ l[-1] }}|{{ l[1:] }}|{{ l[::-1] }}|"
                 "{{ s[1:3] }}|{{ s[::-1] }}",
                 R"({"d": {"a": 1, "b": [1, "two"]}, "l": [1, 2, 3], "s": "héllo"})") ==
          "|False|1|[1, 'two']|False|3|[2, 3]|[3, 2, 1]|él|olléh");
}

TEST_CASE("filters published templates use", "[jinja]") {
    CHECK(render("{{ '  a b  '|trim }}|{{ 'xxaxx'|trim('x') }}|{{ 'Hi'|upper }}{{ 'Hi'|lower }}|{{ 'héllo'|length }}|{{ [3, 1]|first }}"
                 "{{ [3, 1]|last }}|{{ [1, 2, 3]|join('-') }}|{{ 'aaa'|replace('a', 'b', 2) }}") == "a b|a|HIhi|5|31|1-2-3|bba");
    CHECK(render("{{ u|default('dflt') }}|{{ ''|default('e', true) }}|{{ none|default('n') }}|{{ d|items|list }}|{{ d|dictsort }}|"
                 "{{ '42'|int + 1 }}|{{ '4.7'|int }}|{{ 'x'|int(7) }}|{{ 3|float }}|{{ 12|string ~ '!' }}",
                 R"({"d": {"b": 2, "a": 1}})") == "dflt|e|None|[('b', 2), ('a', 1)]|[('a', 1), ('b', 2)]|43|4|7|3.0|12!");
    CHECK(render("{{ ms|selectattr('role', 'equalto', 'user')|map(attribute='content')|join(',') }}|"
                 "{{ ms|rejectattr('role', 'eq', 'user')|list|length }}|{{ ms|map(attribute='content')|map('upper')|list }}|"
                 "{{ ms|selectattr('tool')|list|length }}|{{ [1, 2, 3, 4]|select('even')|list }}",
                 R"({"ms": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "tool": 1},
                             {"role": "user", "content": "c"}]})") == "a,c|1|['A', 'B', 'C']|1|[2, 4]");
    CHECK(render("{{ 'line1\\nline2\\n\\nline4'|indent(2) }}|{{ 'a\\nb'|indent(4, true) }}|{{ 'a\\n\\nb'|indent(2, blank=true) }}") ==
          "line1\n  line2\n\n  line4|    a\n    b|a\n  \n  b");
    CHECK(render("{{ 'x'|center(5) }}|{{ [3, 1, 2]|sort }}|{{ [3, 1, 2]|sort(reverse=true) }}|{{ ['b', 'A', 'c']|sort }}|"
                 "{{ [1, 2, 2, 3]|unique|list }}|{{ [1, 2]|reverse|list }}|{{ [1, 2, 3]|sum }}|{{ [4, 2]|min }}{{ [4, 2]|max }}|"
                 "{{ -3|abs }}|{{ 2.567|round(2) }}|{{ 'a b c'|wordcount }}|{{ '<a>'|e }}|{{ 'x'|safe }}|{{ 'ab'|list }}|"
                 "{{ 'hello'|capitalize }}") ==
          "  x  |[1, 2, 3]|[3, 2, 1]|['A', 'b', 'c']|[1, 2, 3]|[2, 1]|6|24|3|2.57|3|&lt;a&gt;|x|['a', 'b']|Hello");
}

TEST_CASE("formatting: the % operator, the format filter and str.format", "[jinja]") {
    CHECK(render("{{ '%s-%d-%5.2f|%-4s|%04d|%x|%r|%%|%.2s' % ('a', 3.9, 2.345, 'b', 7, 255, 'q', 'xyz') }}|"
                 "{{ '%(k)s=%(v)d' % {'k': 'n', 'v': 2} }}|{{ '%s' | format([1, 'a']) }}|{{ '%s and %s'|format('x', none) }}|"
                 "{{ '%+d %e %g' % (5, 12345.678, 0.0001) }}") ==
          "a-3- 2.35|b   |0007|ff|'q'|%|xy|n=2|[1, 'a']|x and None|+5 1.234568e+04 0.0001");
    CHECK(render("{{ '{}-{}'.format('a', 1) }}|{{ '{0}{1}{0}'.format('x', 'y') }}|{{ '{name}={v!r}'.format(name='k', v='q') }}|"
                 "{{ '{:>5}|{:<4}|{:^7}|{:*^9}'.format('r', 'l', 'c', 'm') }}|{{ '{:05d}|{:+d}|{:,}|{:x}|{:#b}'.format(42, 7, 1234567, 255, 5) }}|"
                 "{{ '{:.2f}|{:8.3f}|{:e}|{:.1%}|{}'.format(3.14159, 2.5, 12345.678, 0.256, 1.5) }}|{{ '{{}}{}'.format(none) }}|"
                 "{{ '{0[a]} {0[b][1]} {1.role}'.format({'a': 1, 'b': [2, 3]}, {'role': 'user'}) }}|{{ '{:.3}'.format('abcdef') }}|"
                 "{{ '{}'.format([1, 'a']) }}") ==
          "a-1|xyx|k='q'|    r|l   |   c   |****m****|00042|+7|1,234,567|ff|0b101|3.14|   2.500|1.234568e+04|25.6%|1.5|{}None|"
          "1 3 user|abc|[1, 'a']");
    CHECK_THAT(error_of("{{ '{} {}'.format('a') }}").message(), Catch::Contains("out of range"));
    CHECK_THAT(error_of("{{ '%s %s' % ('a',) }}").message(), Catch::Contains("not enough arguments"));
    CHECK_THAT(error_of("{{ '%s' % ('a', 'b') }}").message(), Catch::Contains("not all arguments converted"));
    CHECK_THAT(error_of("{{ '%d' % 'x' }}").message(), Catch::Contains("a real number is required"));
}

TEST_CASE("tojson as transformers defines it", "[jinja]") {
    const char *v = R"({"v": {"b": [1, 2.5, true, null], "a": {}, "c": []}})";
    CHECK(render("{{ v|tojson }}", v) == R"({"b": [1, 2.5, true, null], "a": {}, "c": []})");
    CHECK(render("{{ v|tojson(indent=2) }}", v) == "{\n  \"b\": [\n    1,\n    2.5,\n    true,\n    null\n  ],\n  \"a\": {},\n  \"c\": []\n}");
    CHECK(render("{{ v|tojson(sort_keys=true, separators=[',', ':']) }}", v) == R"({"a":{},"b":[1,2.5,true,null],"c":[]})");
    // ensure_ascii off: non-ASCII text as it is; control characters escaped.
    CHECK(render("{{ s|tojson }}", R"({"s": "é\"\\\n\u0001"})") == R"("é\"\\\n\u0001")");
    CHECK(render("{{ s|tojson(ensure_ascii=true) }}", R"({"s": "é😀"})") == R"("\u00e9\ud83d\ude00")");
}

TEST_CASE("tests", "[jinja]") {
    CHECK(render("{{ x is none }}|{{ x is not none }}|{{ 's' is string }}|{{ {} is mapping }}|{{ [] is iterable }}|{{ 1 is number }}|"
                 "{{ 1 is integer }}|{{ 1.5 is float }}|{{ true is boolean }}|{{ 6 is divisibleby 3 }}|{{ 4 is even }}|{{ 'ab' is lower }}|"
                 "{{ x is sameas none }}|{{ y is undefined }}",
                 R"({"x": null})") == "True|False|True|True|True|True|True|True|True|True|True|True|True|True");
}

TEST_CASE("string and dict methods", "[jinja]") {
    CHECK(render("{{ ' Hello World '.strip() }}|{{ 'abc'.startswith('a') }}{{ 'abc'.endswith(('x', 'c')) }}|{{ 'a,b,,c'.split(',') }}|"
                 "{{ ' a  b '.split() }}|{{ 'a b c'.split(' ', 1) }}|{{ 'AbC'.lower() }}{{ 'abc'.upper() }}|{{ 'a-a'.replace('-', '+') }}|"
                 "{{ 'hello world'.title() }}|{{ 'x\\n'.rstrip('\\n') }}|{{ '<think>a</think>b'.split('</think>')[-1] }}") ==
          "Hello World|TrueTrue|['a', 'b', '', 'c']|['a', 'b']|['a', 'b c']|abcABC|a+a|Hello World|x|b");
    CHECK(render("{{ d.get('a') }}|{{ d.get('z', 'none here') }}|{{ d.get('z') }}|{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}|"
                 "{{ d.keys()|list }}|{{ d.values()|list }}|{{ 'a' in d }}",
                 R"({"d": {"a": 1, "b": "x"}})") == "1|none here|None|a=1;b=x;|['a', 'b']|[1, 'x']|True");
    // The sandbox is immutable: methods that change a list or dict fail.
    CHECK_THAT(error_of("{% set l = [] %}{{ l.append(1) }}").message(), Catch::Contains("unsafe"));
    CHECK_THAT(error_of("{{ d.update({}) }}", R"({"d": {}})").message(), Catch::Contains("unsafe"));
}

TEST_CASE("loops, loop variables and loop controls", "[jinja]") {
    CHECK(render("{% for x in l %}{{ loop.index }}/{{ loop.index0 }}/{{ loop.revindex }}/{{ loop.first }}/{{ loop.last }}/"
                 "{{ loop.length }}/{{ loop.previtem }}/{{ loop.nextitem }};{% endfor %}",
                 R"({"l": ["a", "b", "c"]})") == "1/0/3/True/False/3//b;2/1/2/False/False/3/a/c;3/2/1/False/True/3/b/;");
    CHECK(render("{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 5 %}{% break %}{% endif %}{{ x }}{% endfor %}|"
                 "{% for x in [] %}no{% else %}empty{% endfor %}|{% for x in range(6) if x is odd %}{{ x }}{{ loop.length }}{% endfor %}|"
                 "{% for x in 'ab' %}{{ loop.cycle('+', '-') }}{{ x }}{% endfor %}") == "0134|empty|133353|+a-b");
}

TEST_CASE("set, scopes, namespace and macros", "[jinja]") {
    CHECK(render("{% set ns = namespace(n=0, found=false) %}{% for i in range(4) %}{% set ns.n = ns.n + i %}{% set local = i %}{% endfor %}"
                 "{{ ns.n }}|{{ local is defined }}|{% if true %}{% set inner = 'kept' %}{% endif %}{{ inner }}|{% set a, b = 1, 2 %}"
                 "{{ a + b }}|{% set blk %}x{{ 1 }}y{% endset %}{{ blk }}") == "6|False|kept|3|x1y");
    CHECK(render("{% macro greet(name, punct='!') %}Hello {{ name }}{{ punct }}{% endmacro %}{{ greet('Ann') }}|{{ greet('Bo', punct='?') }}|"
                 "{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1)|int }}{% endif %}{% endmacro %}{{ fact(5) }}") ==
          "Hello Ann!|Hello Bo?|120");
    CHECK_THAT(error_of("{% set x = 1 %}{% set x.a = 2 %}").message(), Catch::Contains("non-namespace"));
}

TEST_CASE("whitespace control: trim_blocks, lstrip_blocks, - and +, comments, raw", "[jinja]") {
    CHECK(render("a\n  {% if true %}\n  b\n  {% endif %}\nc\n  {# comment #}\nd {%- if true %} e {% endif -%} f\n{{- ' g ' -}}\n"
                 "h {% raw %}{{ not }}{% endraw %}\n") == "a\n  b\nc\nd e f g h {{ not }}");
    CHECK(render("{%- for m in ms -%}\n  [{{ m }}]\n{%- endfor %}\n  {%+ if true %}kept{% endif +%}\nend", R"({"ms": [1, 2]})") ==
          "[1][2]  kept\nend");
    // One trailing newline of the template goes (keep_trailing_newline is off); \r\n is \n.
    CHECK(render("x\r\ny\n\n") == "x\ny\n");
}

TEST_CASE("raise_exception and strftime_now", "[jinja]") {
    const TemplateError e = error_of("line one\n{% if messages|length > 1 %}{{ raise_exception('only one message, please') }}{% endif %}",
                                     R"({"messages": [1, 2]})");
    CHECK(e.kind() == TemplateError::Kind::Raised);
    CHECK(std::string(e.what()) == "only one message, please");
    CHECK(render("{{ strftime_now('%Y')|length }}") == "4");
}

TEST_CASE("syntax errors name the line and column", "[jinja]") {
    auto syntax = [](const std::string &t) {
        const TemplateError e = error_of(t);
        CHECK(e.kind() == TemplateError::Kind::Syntax);
        return e;
    };
    TemplateError e = syntax("ok\n{% if x %}\nno end");
    CHECK(e.line() == 3);
    CHECK_THAT(e.what(), Catch::Contains("expected 'elif' or 'else' or 'endif'"));
    e = syntax("a\nb {{ 1 + }}");
    CHECK(e.line() == 2);
    CHECK(e.column() == 10);
    CHECK_THAT(e.what(), Catch::StartsWith("line 2, column 10: unexpected '}}'"));
    CHECK_THAT(syntax("{{ x|nosuchfilter }}").message(), Catch::Contains("no filter named 'nosuchfilter'"));
    CHECK_THAT(syntax("{% if x is nosuchtest %}{% endif %}").message(), Catch::Contains("no test named 'nosuchtest'"));
    CHECK_THAT(syntax("{{ 'open }}").message(), Catch::Contains("unterminated string"));
    CHECK_THAT(syntax("{# open").message(), Catch::Contains("unterminated comment"));
    CHECK_THAT(syntax("{% endfor %}").message(), Catch::Contains("unknown statement 'endfor'"));
    CHECK_THAT(syntax("{% include 'x' %}").message(), Catch::Contains("not supported"));
    CHECK_THAT(syntax("{{ a ]] }}").message(), Catch::Contains("unexpected ']'"));
}

TEST_CASE("runtime errors carry the line", "[jinja]") {
    TemplateError e = error_of("one\ntwo {{ x.y }}");
    CHECK(e.kind() == TemplateError::Kind::Runtime);
    CHECK(e.line() == 2);
    CHECK_THAT(e.what(), Catch::Contains("'x' is undefined"));
    CHECK_THAT(error_of("{{ 'a' + 1 }}").message(), Catch::Contains("unsupported operand type(s) for +: 'str' and 'int'"));
    CHECK_THAT(error_of("{{ 1 // 0 }}").message(), Catch::Contains("division"));
    CHECK_THAT(error_of("{{ 9223372036854775807 + 1 }}").message(), Catch::Contains("integer overflow"));
    CHECK_THAT(error_of("{% for x in none %}{% endfor %}").message(), Catch::Contains("not iterable"));
    CHECK_THAT(error_of("{{ range(1000000)|length }}").message(), Catch::Contains("MAX_RANGE"));
}

TEST_CASE("a hostile template is stopped, never hangs or overflows the stack", "[jinja]") {
    using Kind = TemplateError::Kind;
    const auto start = std::chrono::steady_clock::now();
    // Loops: 10^10 iterations are cut off at the step limit.
    TemplateError e = error_of("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}");
    CHECK(e.kind() == Kind::Limit);
    CHECK_THAT(e.message(), Catch::Contains("steps"));
    // Quadratic work: a list or string grown by copying, a big string walked again and again.
    CHECK(error_of("{% set ns = namespace(l=[]) %}{% for i in range(100000) %}{% set ns.l = ns.l + [i] %}{% endfor %}").kind() ==
          Kind::Limit);
    CHECK(error_of("{% set s = 'x' * 10000000 %}{% for i in range(100000) %}{% set t = s|upper %}{% endfor %}").kind() == Kind::Limit);
    CHECK(error_of("{% set s = 'x' * 10000000 %}{% for i in range(100000) %}{% set t = s.find('y') %}{% endfor %}").kind() ==
          Kind::Limit);
    // Unbounded recursion.
    e = error_of("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
    CHECK(e.kind() == Kind::Limit);
    CHECK_THAT(e.message(), Catch::Contains("nesting deeper"));
    // Output and string sizes.
    Limits small;
    small.max_output = 1 << 20;
    CHECK(error_of("{% for i in range(100000) %}{{ 'x' * 100 }}{% endfor %}", "{}", small).kind() == Kind::Limit);
    CHECK(error_of("{{ 'x' * 100000000000 }}").kind() == Kind::Limit);
    CHECK(error_of("{% set s = 'xxxxxxxxxx' * 100000 %}{{ s.replace('x', s) }}").kind() == Kind::Limit);
    CHECK(error_of("{% set l = [1] * 1000000 %}{{ l * 1000000 }}").kind() == Kind::Limit);
    CHECK(error_of("{{ ('%1000000d' * 100) % ((1,) * 100) }}").kind() == Kind::Limit);
    CHECK(error_of("{{ range(-9223372036854775807, 9223372036854775807, 1) }}").message() ==
          "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    CHECK(render("{{ range(-9223372036854775807, 9223372036854775807, 4611686018427387904)|length }}") == "4");
    CHECK_THAT(error_of("{{ (-9223372036854775807 - 1)|abs }}").message(), Catch::Contains("integer overflow"));
    // Deep nesting in the source is refused by the parser, before anything recurses on it.
    CHECK(error_of("{{ " + std::string(100000, '(') + "1" + std::string(100000, ')') + " }}").kind() == Kind::Syntax);
    std::string ifs;
    for (int i = 0; i < 5000; ++i) ifs += "{% if true %}";
    CHECK_THAT(error_of(ifs).message(), Catch::Contains("nested too deeply"));
    CHECK(error_of("{{ " + std::string(50000, '-') + "1 }}").kind() == Kind::Syntax);
    // Long chains parse without recursion but nest as deeply: refused the same way.
    std::string chain = "{{ x";
    for (int i = 0; i < 50000; ++i) chain += "|trim";
    CHECK(error_of(chain + " }}").kind() == Kind::Syntax);
    std::string sum = "{{ 1";
    for (int i = 0; i < 50000; ++i) sum += " + 1";
    CHECK(error_of(sum + " }}").kind() == Kind::Syntax);
    std::string attrs = "{{ x";
    for (int i = 0; i < 50000; ++i) attrs += ".a";
    CHECK(error_of(attrs + " }}").kind() == Kind::Syntax);
    // Deeply nested JSON input.
    CHECK_THROWS_AS(rf::jinja::from_json(std::string(100000, '[') + std::string(100000, ']')), TemplateError);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(60));
}

TEST_CASE("values built in C++", "[jinja]") {
    Value ctx = Value::dict();
    Value msgs = Value::list();
    Value m = Value::dict();
    m.set("role", "user");
    m.set("content", "hi");
    msgs.push(m);
    ctx.set("messages", msgs);
    CHECK(Template::parse("{% for m in messages %}{{ m.role }}:{{ m['content'] }}{% endfor %}").render(ctx) == "user:hi");
    CHECK(rf::jinja::to_json(ctx) == R"({"messages": [{"role": "user", "content": "hi"}]})");
}
