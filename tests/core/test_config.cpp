#include <catch2/catch.hpp>

#include "rocmforge/error.h"
#include "rocmforge/runtime.h"

using rf::Config;

static std::string usage_error_of(const std::string &json) {
    try {
        Config::from_json(json, "test.json");
    } catch (const rf::UsageError &e) {
        REQUIRE(e.exit_code() == 2);
        return e.what();
    }
    return "";
}

TEST_CASE("config: a valid file sets every field") {
    Config c = Config::from_json(R"({"backends": ["cpu"], "plugin_dirs": ["/p"], "kernel_pack_dirs": ["/k"],
        "profiler": {"enabled": true, "trace": "t.json"}, "op_overrides": {"attention": "cpu"},
        "n_threads": 3, "backend_options": {"cpu": {"simd": "scalar"}}})", "x");
    CHECK(c.backends == std::vector<std::string>{"cpu"});
    CHECK(c.backends_explicit);
    CHECK(c.plugin_dirs == std::vector<std::string>{"/p"});
    CHECK(c.profiler_enabled);
    CHECK(c.profiler_trace == "t.json");
    CHECK(c.op_overrides.at("attention") == "cpu");
    CHECK(c.n_threads == 3);
    std::string bj = c.backend_config_json("cpu");
    CHECK(bj.find("\"simd\":\"scalar\"") != std::string::npos);
    CHECK(bj.find("\"n_threads\":3") != std::string::npos);
    CHECK(bj.find("\"kernel_pack_dirs\":[\"/k\"]") != std::string::npos);
}

TEST_CASE("config: defaults when empty") {
    Config c = Config::from_json("{}", "x");
    CHECK(c.backends == std::vector<std::string>{"hip", "cpu"});
    CHECK_FALSE(c.backends_explicit);
    CHECK_FALSE(c.profiler_enabled);
}

TEST_CASE("config: errors name the problem") {
    CHECK_THAT(usage_error_of("{\"backends\": [\"cpu\""), Catch::Contains("not valid JSON at offset"));
    CHECK_THAT(usage_error_of("[1,2]"), Catch::Contains("must be a JSON object"));
    CHECK_THAT(usage_error_of("{\"backend\": [\"cpu\"]}"), Catch::Contains("unknown key \"backend\""));
    CHECK_THAT(usage_error_of("{\"backends\": \"cpu\"}"), Catch::Contains("must be an array"));
    CHECK_THAT(usage_error_of("{\"backends\": [1]}"), Catch::Contains("only strings"));
    CHECK_THAT(usage_error_of("{\"backends\": []}"), Catch::Contains("is empty"));
    CHECK_THAT(usage_error_of("{\"n_threads\": -1}"), Catch::Contains("n_threads"));
    CHECK_THAT(usage_error_of("{\"profiler\": 3}"), Catch::Contains("profiler"));
    CHECK_THAT(usage_error_of("{\"op_overrides\": {\"matmul\": 1}}"), Catch::Contains("op_overrides.matmul"));
    CHECK_THAT(usage_error_of("{\"op_overrides\": {\"atention\": \"cpu\"}}"),
               Catch::Contains("op \"atention\", which does not exist") && Catch::Contains("(ops: get_rows, matmul,") &&
                   Catch::Contains("attention"));
    CHECK_THAT(usage_error_of("{\"op_overrides\": {\"none\": \"cpu\"}}"), Catch::Contains("op \"none\""));
    CHECK_THAT(usage_error_of(""), Catch::Contains("not valid JSON"));
}

TEST_CASE("config: a missing file is a usage error") {
    CHECK_THROWS_AS(Config::from_file("/nonexistent/rocmforge.json"), rf::UsageError);
}

// Found through the fuzz_config harness (a 200 KB input; libFuzzer keeps to 4 KB): a deeply
// nested config overflowed the stack in the recursive parser and crashed every command.
TEST_CASE("config: deep nesting is refused, never a crash") {
    const size_t levels = 1000000;
    CHECK_THAT(usage_error_of(std::string(levels, '[')), Catch::Contains("not valid JSON"));
    const std::string deep = "{\"backend_options\": {\"cpu\": {\"x\": " + std::string(levels, '[') +
                             std::string(levels, ']') + "}}}";
    CHECK_THAT(usage_error_of(deep), Catch::Contains("nested 1000003 levels deep (at most 64)"));
    // Brackets inside strings are text, not nesting.
    const Config c = Config::from_json("{\"plugin_dirs\": [\"" + std::string(1000, '[') + "\\\"{\"]}", "x");
    CHECK(c.plugin_dirs.at(0).size() == 1002);
}
