#include "rocmforge/executable_dir.h"

#include <filesystem>

namespace rf {

std::string executable_dir() {
    namespace fs = std::filesystem;
    std::error_code ec;
    auto p = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return fs::current_path().string();
    return p.parent_path().string();
}

} // namespace rf
