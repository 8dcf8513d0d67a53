// --backend-option BACKEND.KEY=VALUE: one backend option from the command line, over the config's.
#pragma once
#include <string>
#include <vector>

#include "rocmforge/runtime.h"

namespace rf {

struct BackendOptionArg {
    std::string backend; // "hip", "hip:1"
    std::string key;
    std::string value;   // JSON text
};

// Splits "hip.prefetch=16" (VALUE as JSON when it is JSON, else as a string: avx2 is "avx2").
// Throws UsageError naming `flag` for a text without '.' or '=', an empty backend or key, or a
// backend name that is neither NAME nor NAME:DEVICE.
BackendOptionArg parse_backend_option_arg(const std::string &flag, const std::string &text);
// One flag as given: its name ("--backend-option", ab's "--backend-option-a") and its text.
struct BackendOptionFlag {
    std::string flag, text;
};
// Sets each of `flags` (in order: a later one wins) in `config`.
void apply_backend_option_flags(Config &config, const std::vector<BackendOptionFlag> &flags);

} // namespace rf
