#include "rocmforge/default_model.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "rocmforge/error.h"
#include "rocmforge/executable_dir.h"

namespace fs = std::filesystem;

namespace rf {

static std::vector<fs::path> default_model_candidates() {
    std::vector<fs::path> c;
    const fs::path exe = executable_dir();
    for (const char *rel : {"../models", "models", "../../models"})
        c.push_back((exe / rel / "default.gguf").lexically_normal());
    for (const auto &dir : installed_data_dirs()) c.push_back(fs::path(dir) / "models" / "default.gguf");
    c.push_back(fs::path("models") / "default.gguf");
    return c;
}

std::string find_default_model() {
    if (const char *env = std::getenv("ROCMFORGE_DEFAULT_MODEL"); env && *env) {
        if (!fs::is_regular_file(env))
            throw UsageError(std::string("ROCMFORGE_DEFAULT_MODEL names '") + env + "', which is not a file");
        return env;
    }
    std::error_code ec;
    for (const auto &p : default_model_candidates())
        if (fs::is_regular_file(p, ec)) return p.string();
    return "";
}

std::string default_model_missing_message() {
    std::string msg = "no model given (-m FILE) and no default model found; looked for $ROCMFORGE_DEFAULT_MODEL and";
    for (const auto &p : default_model_candidates()) msg += "\n  " + p.string();
    msg += "\nthe build copies the shipped trained model (models/trained/kjv-q8_0.gguf, see "
           "docs/DEFAULT_MODEL.md) to build/models/default.gguf: run `ninja -C build`, or pass "
           "-m models/trained/kjv-q8_0.gguf";
    return msg;
}

std::string model_path_or_default(const std::string &model_path) {
    if (!model_path.empty()) return model_path;
    const std::string path = find_default_model();
    if (path.empty()) throw UsageError(default_model_missing_message());
    return path;
}

} // namespace rf
