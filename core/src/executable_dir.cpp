#include "rocmforge/executable_dir.h"

#include <dlfcn.h>

#include <filesystem>

#include "install_paths.h"

namespace fs = std::filesystem;

namespace rf {

std::string executable_dir() {
    std::error_code ec;
    auto p = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return fs::current_path().string();
    return p.parent_path().string();
}

std::string module_dir() {
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void *>(&module_dir), &info) || !info.dli_fname) return executable_dir();
    std::error_code ec;
    const fs::path p = fs::weakly_canonical(info.dli_fname, ec);
    return ec ? executable_dir() : p.parent_path().string();
}

static std::vector<std::string> near_module(std::initializer_list<const char *> rels) {
    std::vector<std::string> dirs;
    const fs::path here = module_dir();
    for (const char *rel : rels) dirs.push_back((here / rel).lexically_normal().string());
    return dirs;
}

std::vector<std::string> installed_plugin_dirs() {
    // bin/rocmforge -> ../lib/rocmforge; lib/librocmforge.so -> rocmforge.
    auto dirs = near_module({"../" RF_INSTALL_LIBDIR "/rocmforge", "rocmforge"});
    dirs.push_back(RF_INSTALL_PLUGIN_DIR);
    // The HIP plugins install into <libdir> itself until backends/hip/meson.build names
    // <libdir>/rocmforge (only rocmforge-*.so files are considered in these folders).
    for (auto &dir : near_module({"../" RF_INSTALL_LIBDIR, "."})) dirs.push_back(std::move(dir));
    dirs.push_back(RF_INSTALL_FULL_LIBDIR);
    return dirs;
}

std::vector<std::string> installed_data_dirs() {
    auto dirs = near_module({"../" RF_INSTALL_DATADIR "/rocmforge", "../../" RF_INSTALL_DATADIR "/rocmforge"});
    dirs.push_back(RF_INSTALL_DATA_DIR);
    return dirs;
}

} // namespace rf
