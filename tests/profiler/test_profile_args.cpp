// --profile-every N on the command line reaches the profiler's config as sample_every.
#include <catch2/catch.hpp>

#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "rocmforge/error.h"
#include "runtime_args.h"

namespace {

rf::RuntimeArgs parse(std::vector<std::string> args) {
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    rf::RuntimeArgs ra;
    for (int i = 0; i < int(argv.size()); ++i) {
        const bool consumed = ra.parse(int(argv.size()), argv.data(), i); // throws UsageError on bad values
        REQUIRE(consumed);
    }
    return ra;
}

} // namespace

TEST_CASE("--profile-every sets the profiler's sample_every and turns the profiler on") {
    const rf::Config c = parse({"--profile-every", "8"}).make_config();
    CHECK(c.profiler_enabled);
    rapidjson::Document d;
    d.Parse(c.profiler_config_json().c_str());
    REQUIRE(d.IsObject());
    REQUIRE(d.HasMember("sample_every"));
    CHECK(d["sample_every"].GetInt() == 8);

    const rf::Config plain = parse({"--profile"}).make_config();
    d.Parse(plain.profiler_config_json().c_str());
    CHECK_FALSE(d.HasMember("sample_every"));
}

TEST_CASE("--profile-every refuses values that are not integers >= 1") {
    for (const char *bad : {"0", "-1", "2.5", "x", ""}) {
        INFO(bad);
        CHECK_THROWS_AS(parse({"--profile-every", bad}), rf::UsageError);
    }
}
