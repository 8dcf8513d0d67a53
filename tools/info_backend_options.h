// `rocmforge info`'s list of backend options: per backend plugin found, each option's value in
// force, default, valid values and meaning (ABI 2.10 option_descs; keys only without them).
#pragma once
#include <vector>

#include "rocmforge/plugin_loader.h"
#include "rocmforge/runtime.h"

namespace rf {

void print_backend_options(const std::vector<LoadedPlugin> &plugins, const Config &config);

} // namespace rf
