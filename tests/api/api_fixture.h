// Shared by the C API tests: the default model loaded once, and a checker for failed calls.
#pragma once
#include <string>

#include <rocmforge/rocmforge.h>

namespace api_test {

// The default model (RF_TEST_MODEL), loaded on first use and kept for the whole run.
rocmforge_model *model();
std::string model_path();
// A fresh temporary file path.
std::string temp_file(const std::string &name);

} // namespace api_test

// The call returned `status` and left a message containing `fragment`.
#define REQUIRE_FAILS(call, status, fragment)                                     \
    do {                                                                          \
        const rocmforge_status st_ = (call);                                      \
        INFO(#call << " -> " << rocmforge_status_name(st_) << ": " << rocmforge_last_error()); \
        REQUIRE(st_ == (status));                                                 \
        REQUIRE(std::string(rocmforge_last_error()).find(fragment) != std::string::npos); \
    } while (0)
