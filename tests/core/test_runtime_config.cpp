// A config checked against the plugins found: backend_options must name a backend and keys its
// plugin lists; a backend that cannot start is skipped only when its plugin declares it optional.
#include <catch2/catch.hpp>

#include "fake_plugins.h"
#include "rocmforge/error.h"
#include "rocmforge/runtime.h"

static rf::Config fake_config(const std::string &fields) {
    return rf::Config::from_json("{\"plugin_dirs\": [\"" + fake_plugin_dir() + "\"], " + fields + "}", "t.json");
}

// The message of the UsageError (exit code 2) that creating a runtime for `fields` throws.
static std::string usage_error_of(const std::string &fields) {
    try {
        rf::Runtime::create(fake_config(fields));
    } catch (const rf::UsageError &e) {
        CHECK(e.exit_code() == 2);
        return e.what();
    }
    FAIL("no usage error for " << fields);
    return "";
}

TEST_CASE("backend_options: a backend no plugin provides is refused with the backends found") {
    const std::string msg = usage_error_of(R"("backends": ["fakehost"], "backend_options": {"fakehots": {}})");
    CHECK_THAT(msg, Catch::Contains("t.json: backend_options names backend 'fakehots'") &&
                        Catch::Contains("backends found: ") && Catch::Contains("fakehost") && Catch::Contains("fakedev"));
}

TEST_CASE("backend_options: a key the plugin does not list is refused with the keys it lists") {
    // Two plugins provide fakedev (one cannot start): the keys of both are valid.
    const std::string msg = usage_error_of(R"("backends": ["fakedev"], "backend_options": {"fakedev": {"mdoe": 1}})");
    CHECK_THAT(msg, Catch::Contains("backend_options.fakedev.mdoe is not an option of backend 'fakedev'") &&
                        Catch::Contains("its options: mode, speed"));
    auto rt = rf::Runtime::create(fake_config(R"("backends": ["fakedev"], "backend_options": {"fakedev": {"mode": 1, "speed": 2}})"));
    CHECK(rt->find("fakedev") != nullptr);
}

TEST_CASE("backend_options: keys of a backend the config does not use are checked too") {
    CHECK_THAT(usage_error_of(R"("backends": ["fakehost"], "backend_options": {"fakedev": {"x": 1}})"),
               Catch::Contains("backend_options.fakedev.x"));
}

TEST_CASE("backend_options: a plugin that lists no keys (ABI < 1.2) gets them unchecked") {
    auto rt = rf::Runtime::create(fake_config(R"("backends": ["fakehost"], "backend_options": {"fakehost": {"anything": 1}})"));
    CHECK(rt->find("fakehost") != nullptr);
}

TEST_CASE("backends: an optional backend that cannot start is skipped with its reason") {
    auto rt = rf::Runtime::create(fake_config(R"("backends": ["fakegpu", "fakehost"])"));
    REQUIRE(rt->backends().size() == 1);
    CHECK(rt->primary()->name() == "fakehost");
    REQUIRE(rt->unavailable().size() == 1);
    CHECK(rt->unavailable()[0].first == "fakegpu");
    CHECK_THAT(rt->unavailable()[0].second, Catch::Contains("cannot start") && Catch::Contains("fake driver missing"));
}

TEST_CASE("backends: an optional backend refusing its options is an error, not skipped") {
    rf::Config c = fake_config(R"("backends": ["fakegpu", "fakehost"], "backend_options": {"fakegpu": {"mode": "invalid"}})");
    CHECK_THROWS_WITH(rf::Runtime::create(c), Catch::StartsWith("backend 'fakegpu' cannot start") &&
                                                   Catch::Contains("an option is invalid"));
}

TEST_CASE("backends: a backend not declared optional must start when the config names it") {
    rf::Config c = fake_config(R"("backends": ["fakebroken", "fakehost"])");
    CHECK_THROWS_WITH(rf::Runtime::create(c), Catch::StartsWith("backend 'fakebroken' cannot start") &&
                                                   Catch::Contains("fake driver missing"));
}

TEST_CASE("backends: an optional backend the user requires (--backend) must start") {
    rf::Config c = fake_config(R"("backends": ["fakegpu", "fakehost"])");
    c.required = {"fakegpu"};
    CHECK_THROWS_WITH(rf::Runtime::create(c), Catch::StartsWith("backend 'fakegpu' cannot start"));
}

TEST_CASE("backends: a name no plugin provides fails when the config lists it, whatever the name") {
    for (const char *name : {"nosuch", "hip"}) {
        const std::string msg = usage_error_of(std::string("\"backends\": [\"") + name + "\", \"fakehost\"]");
        CHECK_THAT(msg, Catch::Contains(std::string("no plugin provides backend '") + name + "'"));
    }
}
