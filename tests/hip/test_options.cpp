// The HIP backend's options (backends/hip/options.h) without a GPU: the table the plugin hands
// the host (option_keys, option_descs) agrees with itself and with Options' defaults, and
// parse_options refuses a wrong type or a value out of range, naming the key and what it takes.
#include <catch2/catch.hpp>
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

#include "options.h"

namespace {

std::string parse_error(const std::string &json) {
    rf_hip::Options o;
    std::string err;
    if (rf_hip::parse_options(json.c_str(), o, err)) return "";
    return err.empty() ? "(no message)" : err;
}

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

} // namespace

TEST_CASE("hip options: option_keys and option_descs list the same keys, each once") {
    int32_t n = -1;
    const rf_option_desc *d = rf_hip::option_descs(&n);
    REQUIRE(d);
    REQUIRE(n > 6);
    const char *const *keys = rf_hip::option_keys();
    std::set<std::string> seen;
    int32_t i = 0;
    for (; keys[i]; ++i) {
        REQUIRE(i < n);
        CHECK(std::string(keys[i]) == d[i].key);
        CHECK(seen.insert(keys[i]).second);
    }
    CHECK(i == n);
    for (const char *k : {"device", "kernel_pack_dirs", "packs", "arch_override", "jit", "cache_dir"}) CHECK(seen.count(k));
}

TEST_CASE("hip options: every description is complete and its default is what Options holds") {
    int32_t n = 0;
    const rf_option_desc *d = rf_hip::option_descs(&n);
    std::string defaults = "{";
    for (int32_t i = 0; i < n; ++i) {
        INFO(d[i].key);
        REQUIRE(d[i].default_value);
        REQUIRE(d[i].help);
        CHECK(std::strlen(d[i].help) > 0);
        CHECK(d[i].type >= RF_OPTION_BOOL);
        CHECK(d[i].type <= RF_OPTION_STRING_LIST);
        CHECK((d[i].type == RF_OPTION_ENUM) == (d[i].choices != nullptr));
        if (d[i].type == RF_OPTION_INT) {
            CHECK(d[i].min <= d[i].max);
            const long long v = std::stoll(d[i].default_value);
            CHECK(v >= d[i].min);
            CHECK(v <= d[i].max);
        }
        if (d[i].type == RF_OPTION_ENUM)
            CHECK(contains("|" + std::string(d[i].choices) + "|", "|" + std::string(d[i].default_value) + "|"));
        if (!*d[i].default_value) continue; // none (a path, a list)
        const bool quoted = d[i].type == RF_OPTION_STRING || d[i].type == RF_OPTION_ENUM;
        defaults += std::string(defaults.size() > 1 ? ", " : "") + "\"" + d[i].key + "\": " + (quoted ? "\"" : "") +
                    d[i].default_value + (quoted ? "\"" : "");
    }
    defaults += "}";
    INFO(defaults);
    rf_hip::Options o;
    o.jit = "force", o.prefetch_max_mb = 1, o.graphs = false; // changed, so the defaults must set them back
    std::string err;
    REQUIRE(rf_hip::parse_options(defaults.c_str(), o, err));
    CHECK(o == rf_hip::Options{});
}

TEST_CASE("hip options: values are read into Options") {
    rf_hip::Options o;
    std::string err;
    REQUIRE(rf_hip::parse_options(R"({"graphs": false, "mmqp_cols": 64, "observer_events": "on", "packs": ["a.so", "b.so"],
                                     "attention_wide4_blocks": 0, "h16_tokens": -1, "n_threads": 4})",
                                  o, err));
    CHECK(!o.graphs);
    CHECK(o.mmqp_cols == 64);
    CHECK(o.observer_events == "on");
    CHECK(o.packs == std::vector<std::string>{"a.so", "b.so"});
    CHECK(o.attention_wide4_blocks == 0);
    CHECK(o.h16_tokens == -1);
    rf_hip::Options empty;
    REQUIRE(rf_hip::parse_options("", empty, err)); // no config: the defaults
    CHECK(empty == rf_hip::Options{});
}

TEST_CASE("hip options: a wrong type or a value out of range is refused, naming the key and the range") {
    CHECK(contains(parse_error("[1]"), "not a JSON object"));
    CHECK(contains(parse_error("{\"graphs\": 1}"), "'graphs': expected true or false"));
    CHECK(contains(parse_error("{\"attention_blocks_per_sm\": 100}"), "'attention_blocks_per_sm': expected an integer in 1..64"));
    CHECK(contains(parse_error("{\"attention_blocks_per_sm\": 0}"), "1..64"));
    CHECK(contains(parse_error("{\"attention_blocks_per_sm\": 8.5}"), "1..64"));
    CHECK(contains(parse_error("{\"attention_blocks_per_sm\": \"8\"}"), "1..64"));
    CHECK(contains(parse_error("{\"mmq_ksplit\": 3}"), "'mmq_ksplit': expected one of the integers 0|1|2|4"));
    CHECK(contains(parse_error("{\"mmqp_cols\": 96}"), "0|64|128"));
    CHECK(contains(parse_error("{\"prefetch\": \"sometimes\"}"), "'prefetch': expected one of the strings auto|on|off"));
    CHECK(contains(parse_error("{\"prefetch\": \"auto|on\"}"), "auto|on|off"));
    CHECK(contains(parse_error("{\"prefetch\": true}"), "auto|on|off"));
    CHECK(contains(parse_error("{\"jit\": \"sometimes\"}"), "'jit'"));
    CHECK(contains(parse_error("{\"packs\": [\"a.so\", 2]}"), "'packs': expected an array of strings"));
    CHECK(contains(parse_error("{\"cache_dir\": 5}"), "'cache_dir': expected a string"));
    CHECK(contains(parse_error("{\"device\": -1}"), "'device'"));
    CHECK(contains(parse_error("{\"moe_group_min\": 5000000000}"), "'moe_group_min'"));
    CHECK(parse_error("{\"mmq_ksplit\": 4, \"prefetch\": \"off\", \"unknown_host_key\": [1]}").empty());
}

// Through the plugin as the host loads it (RF_HIP_PLUGIN: the NVIDIA flavour where this build
// makes it): the vtable exports both lists, and init refuses a bad value before it looks for a GPU.
TEST_CASE("hip plugin: option_descs in the vtable, and init refuses a bad option with RF_ERR_INVALID") {
    const char *path = std::getenv("RF_HIP_PLUGIN");
    if (!path || !*path) return; // no NVIDIA toolkit in this build: no plugin
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(lib);
    auto entry = reinterpret_cast<const rf_plugin_info *(*)()>(dlsym(lib, RF_PLUGIN_ENTRY_SYMBOL));
    REQUIRE(entry);
    const rf_plugin_info *info = entry();
    REQUIRE(info->abi_minor >= 10);
    const auto *vt = static_cast<const rf_backend_vtable *>(info->vtable);
    const auto descs = RF_SLOT(vt, rf_backend_vtable, option_descs);
    const auto keys = RF_SLOT(vt, rf_backend_vtable, option_keys);
    REQUIRE(descs);
    REQUIRE(keys);
    int32_t n = 0;
    const rf_option_desc *d = descs(&n);
    const char *const *k = keys();
    for (int32_t i = 0; i < n; ++i) CHECK(std::string(k[i]) == d[i].key);
    CHECK(k[n] == nullptr);
    char err[512] = {0};
    void *ctx = nullptr;
    CHECK(vt->init("{\"attention_wide_max\": 4096}", &ctx, err, sizeof err) == RF_ERR_INVALID);
    CHECK(contains(err, "'attention_wide_max': expected an integer in 0..1024"));
    CHECK(ctx == nullptr);
    CHECK(vt->init("{\"stats\": \"yes\"}", &ctx, err, sizeof err) == RF_ERR_INVALID);
    CHECK(contains(err, "'stats'"));
    dlclose(lib);
}
