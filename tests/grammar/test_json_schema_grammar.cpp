// JSON schema -> GBNF: what each keyword lets through and keeps out (the grammar run on text),
// and every keyword it cannot express refused by name.
#include <catch2/catch.hpp>

#include <cstdio>

#include "grammar_test_util.h"
#include "json_schema_check.h"

using rf::grammar::json_schema_to_gbnf;
using rf::grammar::SchemaError;
using rf_test::matches;

namespace {

struct Schema {
    std::string json;
    std::shared_ptr<const rf::grammar::TokenGrammar> g;
    explicit Schema(std::string s) : json(std::move(s)), g(rf_test::text_grammar(json_schema_to_gbnf(json))) {}
    // The grammar takes the text, and the independent check agrees it is valid.
    bool accepts(const std::string &text) const {
        const bool m = matches(g, text);
        if (m) CHECK(rf_test::schema_violation_text(json, text) == "");
        return m;
    }
};

std::string refused_keyword(const std::string &schema) {
    try {
        json_schema_to_gbnf(schema);
    } catch (const SchemaError &e) {
        return e.keyword() + " at " + e.path();
    }
    return "accepted";
}

} // namespace

TEST_CASE("schema: primitive types", "[grammar]") {
    Schema i(R"({"type": "integer"})");
    CHECK(i.accepts("0"));
    CHECK(i.accepts("-42"));
    CHECK_FALSE(i.accepts("01"));
    CHECK_FALSE(i.accepts("1.5"));
    CHECK_FALSE(i.accepts("\"1\""));
    Schema n(R"({"type": "number"})");
    CHECK(n.accepts("-0.25"));
    CHECK(n.accepts("6.02e23"));
    CHECK(n.accepts("7"));
    CHECK_FALSE(n.accepts("1."));
    CHECK_FALSE(n.accepts(".5"));
    Schema b(R"({"type": "boolean"})");
    CHECK(b.accepts("true"));
    CHECK_FALSE(b.accepts("True"));
    Schema z(R"({"type": "null"})");
    CHECK(z.accepts("null"));
    Schema s(R"({"type": "string"})");
    CHECK(s.accepts(R"("a \"quoted\" \\ \u00e9 word")"));
    CHECK(s.accepts("\"caf\xC3\xA9\""));
    CHECK_FALSE(s.accepts("\"a\nb\"")); // a raw control character
    CHECK_FALSE(s.accepts(R"("\q")"));
    Schema nullable(R"({"type": ["string", "null"]})");
    CHECK(nullable.accepts("null"));
    CHECK(nullable.accepts("\"x\""));
    CHECK_FALSE(nullable.accepts("1"));
}

TEST_CASE("schema: integer bounds, every integer of a window checked", "[grammar]") {
    struct Bounds {
        const char *keywords;
        int64_t lo, hi; // what they allow
    };
    const std::vector<Bounds> cases = {
        {R"("minimum": 0, "maximum": 0)", 0, 0},
        {R"("minimum": 7, "maximum": 1234)", 7, 1234},
        {R"("minimum": -250, "maximum": -19)", -250, -19},
        {R"("minimum": -5, "maximum": 999)", -5, 999},
        {R"("exclusiveMinimum": 10, "exclusiveMaximum": 100)", 11, 99},
        {R"("minimum": 0.5, "maximum": 20.5)", 1, 20},
        {R"("minimum": 18)", 18, INT64_MAX},
        {R"("maximum": -3)", INT64_MIN, -3},
        {R"("minimum": 100, "maximum": 1000)", 100, 1000},
    };
    for (const Bounds &b : cases) {
        INFO(b.keywords);
        Schema s(std::string(R"({"type": "integer", )") + b.keywords + "}");
        for (int64_t v = -1300; v <= 1300; ++v) {
            const bool in = v >= b.lo && v <= b.hi;
            if (s.accepts(std::to_string(v)) != in) FAIL_CHECK(v << (in ? " refused" : " accepted"));
        }
        CHECK(s.accepts("123456789012345") == (b.hi == INT64_MAX));
        CHECK(s.accepts("-123456789012345") == (b.lo == INT64_MIN));
        CHECK_FALSE(s.accepts("-0"));
        CHECK_FALSE(s.accepts("007"));
    }
}

TEST_CASE("schema: string formats date, time, date-time, uuid", "[grammar]") {
    Schema date(R"({"type": "string", "format": "date"})");
    CHECK(date.accepts("\"2024-02-28\""));
    CHECK(date.accepts("\"1999-12-31\""));
    CHECK(date.accepts("\"2023-04-30\""));
    CHECK_FALSE(date.accepts("\"2023-04-31\"")); // April has 30 days
    CHECK_FALSE(date.accepts("\"2023-02-30\""));
    CHECK_FALSE(date.accepts("\"2023-13-01\""));
    CHECK_FALSE(date.accepts("\"2023-00-10\""));
    CHECK_FALSE(date.accepts("\"0000-01-01\""));
    CHECK_FALSE(date.accepts("\"2023-1-01\""));
    Schema time(R"({"format": "time"})"); // a format alone: strings only
    CHECK(time.accepts("\"23:59:59Z\""));
    CHECK(time.accepts("\"08:05:00.125+05:30\""));
    CHECK_FALSE(time.accepts("\"24:00:00Z\""));
    CHECK_FALSE(time.accepts("\"12:00:00\"")); // the offset is required
    CHECK_FALSE(time.accepts("12"));
    Schema dt(R"({"type": "string", "format": "date-time"})");
    CHECK(dt.accepts("\"2026-12-02T06:50:00-01:00\""));
    CHECK_FALSE(dt.accepts("\"2026-12-02 06:50:00Z\""));
    Schema uuid(R"({"type": ["string", "null"], "format": "uuid"})");
    CHECK(uuid.accepts("\"123e4567-e89b-12d3-a456-426614174000\""));
    CHECK(uuid.accepts("null"));
    CHECK_FALSE(uuid.accepts("\"123e4567-e89b-12d3-a456-42661417400\""));
    // Every date the grammar allows exists: all of them checked.
    const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    for (int m = 1; m <= 12; ++m)
        for (int d = 1; d <= 31; ++d) {
            char text[16];
            std::snprintf(text, sizeof text, "\"2023-%02d-%02d\"", m, d);
            CHECK(date.accepts(text) == (d <= days[m - 1]));
        }
}

TEST_CASE("schema: string lengths count characters", "[grammar]") {
    Schema s(R"({"type": "string", "minLength": 2, "maxLength": 3})");
    CHECK_FALSE(s.accepts("\"a\""));
    CHECK(s.accepts("\"ab\""));
    CHECK(s.accepts("\"\xC3\xA9\xC3\xA9\xC3\xA9\""));
    CHECK(s.accepts(R"("\n\t")"));
    CHECK_FALSE(s.accepts("\"abcd\""));
}

TEST_CASE("schema: objects with required and optional properties", "[grammar]") {
    Schema o(R"({"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
                 "tag": {"type": "string"}}, "required": ["name"], "additionalProperties": false})");
    CHECK(o.accepts(R"({"name": "Ada"})"));
    CHECK(o.accepts(R"({"name": "Ada", "age": 36})"));
    CHECK(o.accepts(R"({"name":"Ada","age":36,"tag":"x"})"));
    CHECK(o.accepts("{\n  \"name\": \"Ada\",\n  \"tag\": \"x\"\n}"));
    CHECK_FALSE(o.accepts(R"({"age": 36})"));          // name is required
    CHECK_FALSE(o.accepts(R"({"name": "Ada", "x": 1})")); // no other keys
    CHECK_FALSE(o.accepts(R"({"name": 3})"));
    CHECK_FALSE(o.accepts(R"({"name": "Ada",})"));
    Schema opt(R"({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}})");
    CHECK(opt.accepts("{}"));
    CHECK(opt.accepts(R"({"b": 2})"));
    CHECK(opt.accepts(R"({"a": 1, "b": 2})"));
    CHECK_FALSE(opt.accepts(R"({, "b": 2})"));
    CHECK_FALSE(opt.accepts(R"({"a": 1 "b": 2})"));
    // The schema's order, optional properties before and after a required one.
    Schema mixed(R"({"properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"}},
                     "required": ["b"]})");
    CHECK(mixed.accepts(R"({"b": 2})"));
    CHECK(mixed.accepts(R"({"a": 1, "b": 2})"));
    CHECK(mixed.accepts(R"({"b": 2, "c": 3})"));
    CHECK(mixed.accepts(R"({"a": 1, "b": 2, "c": 3})"));
    CHECK_FALSE(mixed.accepts(R"({"a": 1})"));
    CHECK_FALSE(mixed.accepts(R"({"a": 1, "b": 2,})"));
    CHECK_FALSE(mixed.accepts(R"({"b": 2, "a": 1})")); // not in the schema's order
    // Keys and enum strings that need escapes, and characters beyond ASCII.
    Schema odd(R"({"properties": {"a\"b \u00e9\n": {"enum": ["x\\y", "\u2603"]}}, "required": ["a\"b \u00e9\n"]})");
    CHECK(odd.accepts("{\"a\\\"b \xC3\xA9\\n\": \"x\\\\y\"}"));
    CHECK(odd.accepts("{\"a\\\"b \xC3\xA9\\n\": \"\xE2\x98\x83\"}"));
    CHECK_FALSE(odd.accepts("{\"a\\\"b \xC3\xA9\\n\": \"xy\"}"));
    Schema any_object(R"({"type": "object"})");
    CHECK(any_object.accepts(R"({"x": [1, {"y": null}], "z": "w"})"));
    CHECK_FALSE(any_object.accepts("[]"));
    Schema map(R"({"type": "object", "additionalProperties": {"type": "integer"}})");
    CHECK(map.accepts(R"({"x": 1, "y": 2})"));
    CHECK_FALSE(map.accepts(R"({"x": "1"})"));
}

TEST_CASE("schema: nested objects, arrays and their bounds", "[grammar]") {
    Schema s(R"({"type": "object", "properties": {
        "points": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "number"}},
                   "required": ["x"]}, "minItems": 1, "maxItems": 2}}, "required": ["points"]})");
    CHECK(s.accepts(R"({"points": [{"x": 1}]})"));
    CHECK(s.accepts(R"({"points": [{"x": 1}, {"x": 2.5}]})"));
    CHECK_FALSE(s.accepts(R"({"points": []})"));
    CHECK_FALSE(s.accepts(R"({"points": [{"x": 1}, {"x": 2}, {"x": 3}]})"));
    CHECK_FALSE(s.accepts(R"({"points": [{"y": 1}]})"));
    Schema any_items(R"({"type": "array", "maxItems": 0})");
    CHECK(any_items.accepts("[]"));
    CHECK_FALSE(any_items.accepts("[1]"));
    Schema list(R"({"type": "array", "items": {"type": "integer"}})");
    CHECK(list.accepts("[]"));
    CHECK(list.accepts("[1, 2, 3]"));
    CHECK_FALSE(list.accepts("[1, \"2\"]"));
}

TEST_CASE("schema: enum, const, anyOf, oneOf, allOf", "[grammar]") {
    Schema e(R"({"enum": ["red", "green", 3, null, {"a": [1]}]})");
    CHECK(e.accepts("\"red\""));
    CHECK(e.accepts("3"));
    CHECK(e.accepts("null"));
    CHECK(e.accepts(R"({"a":[1]})"));
    CHECK_FALSE(e.accepts("\"blue\""));
    Schema c(R"({"const": "fixed"})");
    CHECK(c.accepts("\"fixed\""));
    CHECK_FALSE(c.accepts("\"other\""));
    Schema a(R"({"anyOf": [{"type": "integer"}, {"type": "object", "properties": {"k": {"const": 1}}, "required": ["k"]}]})");
    CHECK(a.accepts("5"));
    CHECK(a.accepts(R"({"k": 1})"));
    CHECK_FALSE(a.accepts("\"5\""));
    Schema o(R"({"oneOf": [{"type": "boolean"}, {"type": "null"}]})");
    CHECK(o.accepts("false"));
    CHECK(o.accepts("null"));
    Schema all(R"({"allOf": [{"type": "string", "maxLength": 1}]})");
    CHECK(all.accepts("\"x\""));
    CHECK_FALSE(all.accepts("\"xy\""));
}

TEST_CASE("schema: $ref to $defs, recursive too", "[grammar]") {
    Schema tree(R"({"$ref": "#/$defs/node", "$defs": {"node": {"type": "object", "properties": {
        "v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "required": ["v"]}}})");
    CHECK(tree.accepts(R"({"v": 1})"));
    CHECK(tree.accepts(R"({"v": 1, "kids": [{"v": 2, "kids": [{"v": 3}]}, {"v": 4}]})"));
    CHECK_FALSE(tree.accepts(R"({"v": 1, "kids": [{"w": 2}]})"));
    Schema defs(R"({"type": "object", "properties": {"c": {"$ref": "#/definitions/color"}}, "required": ["c"],
                    "definitions": {"color": {"enum": ["r", "g"]}}})");
    CHECK(defs.accepts(R"({"c": "g"})"));
    CHECK_FALSE(defs.accepts(R"({"c": "b"})"));
}

TEST_CASE("schema: annotations are ignored; an empty schema is any JSON", "[grammar]") {
    Schema s(R"({"title": "T", "description": "d", "$schema": "x", "type": "integer", "default": 3, "examples": [1]})");
    CHECK(s.accepts("3"));
    Schema any("{}");
    CHECK(any.accepts(R"([1, "a", {"b": null}])"));
    Schema yes("true");
    CHECK(yes.accepts("false"));
}

TEST_CASE("schema: what the grammar cannot express is refused by keyword", "[grammar]") {
    CHECK(refused_keyword(R"({"type": "string", "pattern": "^a+$"})") == "pattern at /");
    CHECK(refused_keyword(R"({"type": "string", "format": "email"})") == "format at /format");
    CHECK(refused_keyword(R"({"type": "string", "format": "date", "maxLength": 10})") == "maxLength at /");
    CHECK(refused_keyword(R"({"type": "number", "minimum": 0})") == "minimum at /");
    CHECK(refused_keyword(R"({"maximum": 3})") == "maximum at /");
    CHECK(refused_keyword(R"({"type": "integer", "minimum": 5, "maximum": 4})") == "minimum at /");
    CHECK(refused_keyword(R"({"type": "integer", "minimum": 1e20})") == "minimum at /minimum");
    CHECK(refused_keyword(R"({"type": "object", "properties": {"n": {"type": "number", "multipleOf": 2}}})") ==
          "multipleOf at /properties/n");
    CHECK(refused_keyword(R"({"type": "array", "prefixItems": [{"type": "integer"}]})") == "prefixItems at /");
    CHECK(refused_keyword(R"({"type": "array", "items": [{"type": "integer"}]})") == "items at /items");
    CHECK(refused_keyword(R"({"type": "array", "uniqueItems": true})") == "uniqueItems at /");
    CHECK(refused_keyword(R"({"type": "object", "patternProperties": {"a": {}}})") == "patternProperties at /");
    CHECK(refused_keyword(R"({"allOf": [{"type": "integer"}, {"type": "number"}]})") == "allOf at /allOf");
    CHECK(refused_keyword(R"({"not": {"type": "integer"}})") == "not at /");
    CHECK(refused_keyword(R"({"$ref": "https://example.com/s.json"})") == "$ref at /");
    CHECK(refused_keyword(R"({"$ref": "#/$defs/missing"})") == "$ref at /");
    CHECK(refused_keyword(R"({"type": "strange"})") == "type at /type");
    CHECK(refused_keyword(R"({"type": "object", "properties": {"a": {}}, "required": ["b"], "additionalProperties": false})") ==
          "required at /required");
    CHECK(refused_keyword(R"({"type": "string", "minLength": 3, "maxLength": 2})") == "maxLength at /");
    CHECK(refused_keyword(R"({"type": "integer", "anyOf": [{"type": "integer"}]})") == "type at /");
    CHECK(refused_keyword("false") == "false at /");
    CHECK(refused_keyword("[1]") == " at /");
    CHECK(refused_keyword("{not json") == " at ");
}
