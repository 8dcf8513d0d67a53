// End to end: the trained default model on the CPU generating under JSON schemas, many seeds,
// several sequences at once: every output parses and validates (an independent checker, not the
// grammar), and the same run without the grammar does not (so the grammar is what does it).
#include <cstdlib>

#include <catch2/catch.hpp>

#include "json_schema_check.h"
#include "rocmforge/generation.h"
#include "rocmforge/grammar.h"
#include "rocmforge/runtime.h"
#include "rocmforge/session.h"

using namespace rf;

namespace {

Session &default_model() {
    static Session s = [] {
        Config c;
        c.backends = {"cpu"};
        c.backends_explicit = true;
        if (const char *root = std::getenv("ROCMFORGE_BUILD_ROOT")) c.plugin_dirs.push_back(std::string(root) + "/backends/cpu");
        c.n_threads = 2;
        const char *model = std::getenv("RF_TEST_MODEL");
        REQUIRE(model);
        return Session::load(model, Runtime::create(c));
    }();
    return s;
}

// Outputs of n_seq sequences from one prompt, seeds seed .. seed + n_seq - 1.
std::vector<std::string> run(const std::string &schema, uint32_t seed, int n_seq, bool constrained, float temperature = 1.0f) {
    Session &s = default_model();
    ContextParams cp;
    cp.n_ctx = 2048 * n_seq;
    cp.n_seq_max = n_seq;
    const auto ctx = s.new_context(cp);
    GenerationParams gp;
    gp.sampling.temperature = temperature;
    gp.sampling.top_k = 0;
    gp.sampling.top_p = 1.0f;
    gp.sampling.min_p = 0.0f;
    gp.sampling.seed = seed;
    gp.n_predict = 1500;
    if (constrained)
        gp.grammar = std::make_shared<grammar::TokenGrammar>(grammar::Grammar::parse(grammar::json_schema_to_gbnf(schema)),
                                                             std::make_shared<grammar::TokenTrie>(*s.tokenizer));
    else
        gp.n_predict = 60;
    std::vector<std::string> out((size_t)n_seq);
    GenerationCallbacks cb;
    cb.on_text = [&](int seq, const std::string &text) { out[(size_t)seq] += text; };
    generate(*ctx, *s.tokenizer, std::vector<std::string>((size_t)n_seq, "And the LORD said unto Moses,"), gp, cb);
    return out;
}

const char *kPerson = R"({"type": "object", "properties": {
    "name": {"type": "string", "maxLength": 12},
    "age": {"type": "integer", "minimum": 1, "maximum": 969},
    "alive": {"type": "boolean"},
    "born": {"type": "string", "format": "date"},
    "tribe": {"enum": ["Judah", "Levi", "Dan"]},
    "sons": {"type": "array", "items": {"type": "string", "maxLength": 8}, "minItems": 1, "maxItems": 3},
    "home": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 10}, "x": {"type": ["number", "null"]}},
             "required": ["city"], "additionalProperties": false},
    "note": {"anyOf": [{"type": "null"}, {"const": "amen"}]}
  }, "required": ["name", "age", "born", "tribe", "sons", "home"], "additionalProperties": false})";

} // namespace

TEST_CASE("generate: a schema's output always parses and validates, many seeds", "[grammar][model]") {
    int valid = 0;
    for (uint32_t seed = 1; seed <= 24; seed += 4) {
        for (const std::string &text : run(kPerson, seed, 4, true)) {
            INFO("seed " << seed << ": " << text);
            CHECK(rf_test::schema_violation_text(kPerson, text) == "");
            valid += rf_test::schema_violation_text(kPerson, text).empty();
        }
    }
    CHECK(valid == 24);
}

TEST_CASE("generate: greedy and small schemas too", "[grammar][model]") {
    const char *list = R"({"type": "array", "items": {"enum": [1, 2, 3]}, "minItems": 2, "maxItems": 4})";
    for (const std::string &text : run(list, 7, 2, true, 0.0f)) CHECK(rf_test::schema_violation_text(list, text) == "");
    const char *flag = R"({"type": "boolean"})";
    for (const std::string &text : run(flag, 3, 4, true)) CHECK(rf_test::schema_violation_text(flag, text) == "");
}

TEST_CASE("generate: without the grammar the model does not write this JSON", "[grammar][model]") {
    for (const std::string &text : run(kPerson, 1, 2, false)) CHECK_FALSE(rf_test::schema_violation_text(kPerson, text) == "");
}
