// Where the test plugins built from fake_backend.c are (tests/core/meson.build sets RF_FAKE_HOST).
#pragma once
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

inline std::string fake_plugin_dir() {
    const char *host = std::getenv("RF_FAKE_HOST");
    REQUIRE(host != nullptr);
    return std::filesystem::path(host).parent_path().string();
}
