// Kernel-pack manifest checks (backends/hip/pack_manifest.cpp): pure JSON, so this runs on any
// machine. Each refusal names the pack and the reason.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "pack_manifest.h"

namespace {

const std::vector<std::string> kRequired = {"rf_add_f32", "rf_matmul_q4_0_f32"};

std::string manifest(const std::string &arch, int kargs, const std::string &kernels) {
    return "{\"arch\": \"" + arch + "\", \"abi_major\": 1, \"kargs_version\": " + std::to_string(kargs) +
           ", \"code\": \"k.hsaco\", \"sha256\": \"ab\", \"compiler\": \"hipcc\", \"kernels\": [" + kernels + "]}";
}

// The error for `text`, or "" when it is accepted.
std::string refusal(const std::string &text) {
    rf_hip::PackManifest m;
    std::string err;
    return rf_hip::check_pack_manifest(text, "gfx1030", kRequired, "kernel pack p.json", m, err) ? "" : err;
}

} // namespace

TEST_CASE("pack manifest: a matching manifest is accepted with its fields") {
    rf_hip::PackManifest m;
    std::string err;
    REQUIRE(rf_hip::check_pack_manifest(manifest("gfx1030", 1, "\"rf_add_f32\", \"rf_matmul_q4_0_f32\", \"x\""),
                                        "gfx1030", kRequired, "kernel pack p.json", m, err));
    CHECK(err.empty());
    CHECK(m.code == "k.hsaco");
    CHECK(m.sha256 == "ab");
    CHECK(m.compiler == "hipcc");
    CHECK(m.n_kernels == 3);
}

TEST_CASE("pack manifest: refusals name the pack and the reason") {
    const std::string kernels = "\"rf_add_f32\", \"rf_matmul_q4_0_f32\"";
    CHECK(refusal("{") == "kernel pack p.json: not a valid JSON manifest");
    CHECK(refusal("[]") == "kernel pack p.json: not a valid JSON manifest");
    CHECK(refusal(manifest("sm_90", 1, kernels)) ==
          "kernel pack p.json: built for arch 'sm_90' but the device needs 'gfx1030'");
    CHECK_THAT(refusal(manifest("gfx1030", 2, kernels)), Catch::Contains("ABI 1/kargs 2 but this plugin has ABI 1/kargs 1"));
    CHECK(refusal(manifest("gfx1030", 1, "\"rf_add_f32\"")) ==
          "kernel pack p.json (arch gfx1030) lacks kernel 'rf_matmul_q4_0_f32' that this plugin needs: rebuild the pack");
}

// Same stack overflow as the config's (tests/core/test_config.cpp): the recursive parser on deep nesting.
TEST_CASE("pack manifest: deep nesting is refused, never a crash") {
    const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
    CHECK(refusal(deep) == "kernel pack p.json: not a valid JSON manifest");
    CHECK_THAT(refusal("{\"arch\": " + deep + "}"), Catch::Contains("built for arch ''"));
}
