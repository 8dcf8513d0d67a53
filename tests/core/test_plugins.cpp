#include <catch2/catch.hpp>

#include <cstdlib>

#include "fake_plugins.h"
#include "rocmforge/error.h"
#include "rocmforge/plugin_loader.h"
#include "rocmforge/runtime.h"

static std::string env(const char *name) {
    const char *v = std::getenv(name);
    REQUIRE(v != nullptr);
    return v;
}

TEST_CASE("plugins: a shared object without the entry symbol is refused by name") {
    auto lp = rf::load_plugin_file(env("RF_NOT_PLUGIN"));
    CHECK(lp.info == nullptr);
    CHECK_THAT(lp.record.status, Catch::Contains("not a ROCmForge plugin"));
}

TEST_CASE("plugins: a file that is not a shared object is refused") {
    auto lp = rf::load_plugin_file(env("RF_TEST_DATA") + "/vocab/README.md");
    CHECK(lp.info == nullptr);
    CHECK_THAT(lp.record.status, Catch::Contains("cannot load"));
}

TEST_CASE("plugins: a good plugin loads") {
    auto lp = rf::load_plugin_file(env("RF_FAKE_HOST"));
    REQUIRE(lp.info != nullptr);
    CHECK(std::string(lp.info->name) == "fakehost");
}

TEST_CASE("runtime: a missing plugin folder is a usage error") {
    rf::Config c;
    c.plugin_dirs = {"/nonexistent/plugins"};
    c.backends = {"fakehost"};
    CHECK_THROWS_WITH(rf::Runtime::create(c), Catch::Contains("/nonexistent/plugins") && Catch::Contains("does not exist"));
}

TEST_CASE("runtime: a config naming an unknown backend fails") {
    rf::Config c = rf::Config::from_json("{\"backends\": [\"nosuch\"], \"plugin_dirs\": [\"" + fake_plugin_dir() + "\"]}", "t.json");
    CHECK_THROWS_WITH(rf::Runtime::create(c), Catch::Contains("no plugin provides backend 'nosuch'") && Catch::Contains("fakehost"));
}

TEST_CASE("runtime: naming a backend whose plugin was refused says why") {
    rf::Config c = rf::Config::from_json("{\"backends\": [\"badabi\"], \"plugin_dirs\": [\"" + fake_plugin_dir() + "\"]}", "t.json");
    CHECK_THROWS_WITH(rf::Runtime::create(c), Catch::Contains("refused") && Catch::Contains("ABI version 99"));
}

TEST_CASE("runtime: backends load in config order and records list every candidate") {
    rf::Config c = rf::Config::from_json("{\"backends\": [\"fakedev\", \"fakehost\"], \"plugin_dirs\": [\"" + fake_plugin_dir() + "\"]}", "t.json");
    auto rt = rf::Runtime::create(c);
    REQUIRE(rt->backends().size() == 2);
    CHECK(rt->backends()[0]->name() == "fakedev");
    CHECK(rt->backends()[1]->name() == "fakehost");
    CHECK_FALSE(rt->backends()[0]->host_memory());
    bool saw_refused = false;
    for (const auto &r : rt->plugin_records()) saw_refused |= !r.loaded;
    CHECK(saw_refused);
}

TEST_CASE("runtime: an op override naming an unavailable backend fails") {
    rf::Config c = rf::Config::from_json("{\"backends\": [\"fakehost\"], \"op_overrides\": {\"add\": \"fakedev\"}, \"plugin_dirs\": [\"" + fake_plugin_dir() + "\"]}", "t.json");
    CHECK_THROWS_AS(rf::Runtime::create(c), rf::UsageError);
}

TEST_CASE("runtime: when two plugins provide a backend name, the first that starts wins") {
    rf::Config c = rf::Config::from_json("{\"backends\": [\"fakedev\"], \"plugin_dirs\": [\"" + fake_plugin_dir() + "\"]}", "t.json");
    auto rt = rf::Runtime::create(c);
    REQUIRE(rt->backends().size() == 1);
    CHECK_THAT(rt->backends()[0]->plugin_path(), Catch::EndsWith("rocmforge-fakedev.so"));
}
