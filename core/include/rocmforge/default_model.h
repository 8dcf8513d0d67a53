// The default model every model-loading command falls back to without -m: the KJV-trained
// llama shipped in models/trained (docs/DEFAULT_MODEL.md), copied by the build to
// build/models/default.gguf and installed as share/rocmforge/models/default.gguf.
#pragma once
#include <string>

namespace rf {

// models/default.gguf looked up in: $ROCMFORGE_DEFAULT_MODEL, <exe_dir>/../models,
// <exe_dir>/models, <exe_dir>/../../models (repo root seen from build/tools), the installed
// share/rocmforge/models (installed_data_dirs()), ./models.
// Returns "" when none exists; throws UsageError when $ROCMFORGE_DEFAULT_MODEL names no file.
std::string find_default_model();
// The UsageError text for "no -m and no default model": where it looked and how to get one.
std::string default_model_missing_message();
// -m when given, else the default model; throws UsageError when there is none.
std::string model_path_or_default(const std::string &model_path);

} // namespace rf
