// Backend option values checked against the plugin's descriptions (ABI 2.10 option_descs): the
// JSON type, an int's range, an enum's choices; options set over the file's (--backend-option,
// the C API) go through the same check, name where they were set, and reach the backend's init.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include "fake_plugins.h"
#include "rocmforge/error.h"
#include "rocmforge/option_descs.h"
#include "rocmforge/runtime.h"

namespace {

rf::Config opts_config(const std::string &options) {
    return rf::Config::from_json("{\"plugin_dirs\": [\"" + fake_plugin_dir() + "\"], \"backends\": [\"fakeopts\"], " +
                                     "\"backend_options\": {\"fakeopts\": " + options + "}}",
                                 "t.json");
}

// The message of the UsageError (exit code 2) that creating a runtime for `config` throws.
std::string usage_error_of(const rf::Config &config) {
    try {
        rf::Runtime::create(config);
    } catch (const rf::UsageError &e) {
        CHECK(e.exit_code() == 2);
        return e.what();
    }
    FAIL("no usage error");
    return "";
}

// The config JSON fakeopts' init last received.
std::string last_init_config(const rf::Runtime &rt) {
    void *lib = dlopen(rt.find("fakeopts")->plugin_path().c_str(), RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(lib != nullptr);
    auto fn = reinterpret_cast<const char *(*)()>(dlsym(lib, "fake_last_config"));
    REQUIRE(fn != nullptr);
    const std::string text = fn();
    dlclose(lib);
    return text;
}

} // namespace

TEST_CASE("option values: each type's good values start the backend") {
    auto rt = rf::Runtime::create(
        opts_config(R"({"level": 9, "mode": "safe", "fast": true, "label": "x", "tags": ["a", "b"], "plain": {"any": 1}})"));
    CHECK(rt->find("fakeopts") != nullptr);
    rt = rf::Runtime::create(opts_config(R"({"level": 0, "tags": []})"));
    CHECK(rt->find("fakeopts") != nullptr);
}

TEST_CASE("option values: a wrong type, a value out of range or not a choice is refused by name") {
    struct Case {
        const char *options, *message;
    };
    const Case cases[] = {
        {R"({"level": 10})", "t.json: backend_options.fakeopts.level is 10, but option level of backend 'fakeopts' is of "
                             "type int: an integer in 0..9 (default 2)"},
        {R"({"level": -1})", "an integer in 0..9"},
        {R"({"level": 2.5})", "of type int"},
        {R"({"level": "2"})", "of type int"},
        {R"({"mode": "quick"})", "backend_options.fakeopts.mode is \"quick\", but option mode of backend 'fakeopts' is of "
                                 "type enum: one of auto, fast, safe (default auto)"},
        {R"({"mode": 1})", "of type enum"},
        {R"({"fast": "yes"})", "of type bool: true or false"},
        {R"({"fast": 1})", "true or false"},
        {R"({"label": 3})", "of type string: a string"},
        {R"({"tags": "a"})", "of type string list: an array of strings"},
        {R"({"tags": ["a", 1]})", "an array of strings"},
    };
    for (const auto &c : cases) {
        INFO(c.options);
        CHECK_THAT(usage_error_of(opts_config(c.options)), Catch::Contains(c.message));
    }
}

TEST_CASE("option values: an option set over the file's replaces it, is checked, and names its origin") {
    rf::Config c = opts_config(R"({"level": 3, "mode": "fast"})");
    c.set_backend_option("fakeopts", "level", "7", "--backend-option fakeopts.level=7");
    CHECK(c.backend_option_value("fakeopts", "level") == "7");
    CHECK(c.backend_option_value("fakeopts", "mode") == "\"fast\"");
    CHECK(c.backend_option_source("fakeopts", "level") == "--backend-option fakeopts.level=7");
    CHECK(c.backend_option_source("fakeopts", "mode") == "t.json");
    auto rt = rf::Runtime::create(c);
    const std::string seen = last_init_config(*rt);
    CHECK_THAT(seen, Catch::Contains("\"level\":7") && Catch::Contains("\"mode\":\"fast\""));

    c.set_backend_option("fakeopts", "level", "12", "--backend-option fakeopts.level=12");
    CHECK_THAT(usage_error_of(c), Catch::StartsWith("--backend-option fakeopts.level=12: backend_options.fakeopts.level is 12") &&
                                      Catch::Contains("an integer in 0..9"));
    rf::Config d = opts_config("{}");
    d.set_backend_option("fakeopts", "levle", "1", "--backend-option fakeopts.levle=1");
    CHECK_THAT(usage_error_of(d), Catch::StartsWith("--backend-option fakeopts.levle=1: backend_options.fakeopts.levle is not "
                                                    "an option of backend 'fakeopts'") &&
                                      Catch::Contains("its options: level, mode, fast, label, tags, plain"));
    rf::Config e = opts_config("{}");
    e.set_backend_option("fakeoops", "level", "1", "--backend-option fakeoops.level=1");
    CHECK_THAT(usage_error_of(e), Catch::StartsWith("--backend-option fakeoops.level=1: backend_options names backend 'fakeoops'"));
}

TEST_CASE("option values: merged from a JSON object (the C API's), malformed ones refused") {
    rf::Config c = opts_config("{}");
    c.merge_backend_options(R"({"fakeopts": {"mode": "safe", "tags": ["x"]}})", "params");
    CHECK(c.backend_option_value("fakeopts", "tags") == "[\"x\"]");
    CHECK(c.backend_option_source("fakeopts", "mode") == "params");
    CHECK_THROWS_AS(c.merge_backend_options("[]", "params"), rf::UsageError);
    CHECK_THROWS_WITH(c.merge_backend_options("{\"fakeopts\": 1}", "params"), Catch::Contains("fakeopts must be an object"));
    CHECK_THROWS_WITH(c.merge_backend_options("{\"fake:x\": {}}", "params"), Catch::Contains("neither a backend name"));
    CHECK_THROWS_WITH(c.set_backend_option("hip:1", "device", "2", "flag"), Catch::Contains("contradicts the device"));
    CHECK_THROWS_WITH(c.set_backend_option("fakeopts", "level", "{", "flag"), Catch::Contains("is not JSON"));
    CHECK_THROWS_WITH(c.set_backend_option("fakeopts", "", "1", "flag"), Catch::Contains("empty key"));
}

TEST_CASE("option descriptions: entries without a key are dropped; what each type accepts in words") {
    auto rt = rf::Runtime::create(opts_config("{}"));
    const auto descs = rf::plugin_option_descs(rt->find("fakeopts")->plugin_vtable());
    REQUIRE(descs.size() == 5);
    REQUIRE(rf::find_option_desc(descs, "plain") == nullptr);
    CHECK(rf::option_accepts(*rf::find_option_desc(descs, "mode")) == "one of auto, fast, safe");
    CHECK(rf::option_type_name(RF_OPTION_STRING_LIST) == "string list");
    CHECK(rf::option_type_name(99) == "unknown type 99");
    rf_option_desc odd{"odd", 99, "", 0, 0, nullptr, ""};
    CHECK(rf::option_value_fits(odd, "{\"x\": 1}")); // a type this host lacks: the plugin checks it
    CHECK_FALSE(rf::option_value_fits(*rf::find_option_desc(descs, "level"), "not json"));
    CHECK(rf::plugin_option_descs(nullptr).empty());
}
