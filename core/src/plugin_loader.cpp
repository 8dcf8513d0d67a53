#include "rocmforge/plugin_loader.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#define BOOST_DLL_USE_STD_FS
#include <boost/dll/shared_library.hpp>

#include "rocmforge/error.h"
#include "rocmforge/executable_dir.h"
#include "rocmforge/join.h"
#include "rocmforge/log.h"
#include "rocmforge/pack_abi.h"

namespace fs = std::filesystem;

namespace rf {

namespace {

const char *kind_name(int kind) {
    switch (kind) {
    case RF_PLUGIN_BACKEND: return "backend";
    case RF_PLUGIN_KERNEL_PACK: return "kernel_pack";
    case RF_PLUGIN_PROFILER: return "profiler";
    default: return "unknown";
    }
}

// The first required slot a plugin's vtable lacks (beyond its struct_size, or NULL), or nullptr.
// The core calls these without checking, so a plugin missing one is refused at load.
const char *missing_required_slot(const rf_plugin_info &info) {
#define RF_REQUIRE(type, slot) \
    if (!RF_SLOT(vt, type, slot)) return #slot
    if (info.kind == RF_PLUGIN_BACKEND) {
        const auto *vt = static_cast<const rf_backend_vtable *>(info.vtable);
        RF_REQUIRE(rf_backend_vtable, init);
        RF_REQUIRE(rf_backend_vtable, buffer_alloc);
        RF_REQUIRE(rf_backend_vtable, upload);
        RF_REQUIRE(rf_backend_vtable, download);
        RF_REQUIRE(rf_backend_vtable, supports_op);
        RF_REQUIRE(rf_backend_vtable, compute);
    } else if (info.kind == RF_PLUGIN_PROFILER) {
        const auto *vt = static_cast<const rf_profiler_vtable *>(info.vtable);
        RF_REQUIRE(rf_profiler_vtable, init);
        RF_REQUIRE(rf_profiler_vtable, wrap);
    }
#undef RF_REQUIRE
    return nullptr;
}

bool is_shared_object(const fs::path &p) {
    return p.extension() == ".so" || p.filename().string().find(".so.") != std::string::npos;
}

} // namespace

LoadedPlugin load_plugin_file(const std::string &path) {
    LoadedPlugin lp;
    lp.record.path = path;
    auto lib = std::make_shared<boost::dll::shared_library>();
    try {
        lib->load(fs::path(path), boost::dll::load_mode::rtld_lazy | boost::dll::load_mode::rtld_local);
    } catch (const std::exception &e) {
        lp.record.status = std::string("cannot load: ") + e.what();
        return lp;
    }
    if (!lib->has(RF_PLUGIN_ENTRY_SYMBOL)) {
        lp.record.status = std::string("not a ROCmForge plugin (no symbol ") + RF_PLUGIN_ENTRY_SYMBOL + ")";
        return lp;
    }
    auto entry = lib->get<const rf_plugin_info *()>(RF_PLUGIN_ENTRY_SYMBOL);
    const rf_plugin_info *info = entry();
    if (!info || !info->vtable || !info->name) {
        lp.record.status = "plugin entry returned no plugin description";
        return lp;
    }
    lp.record.name = info->name;
    lp.record.kind = info->kind;
    lp.record.version = info->version ? info->version : "";
    if (info->abi_major != RF_ABI_MAJOR) {
        lp.record.status = "ABI version " + std::to_string(info->abi_major) + "." +
                           std::to_string(info->abi_minor) + " does not match this runtime's " +
                           std::to_string(RF_ABI_MAJOR) + "." + std::to_string(RF_ABI_MINOR);
        return lp;
    }
    if (info->kind != RF_PLUGIN_BACKEND && info->kind != RF_PLUGIN_KERNEL_PACK &&
        info->kind != RF_PLUGIN_PROFILER) {
        lp.record.status = "unknown plugin kind " + std::to_string(info->kind);
        return lp;
    }
    if (info->kind == RF_PLUGIN_KERNEL_PACK) {
        // Packs belong to the GPU backend of their arch, which finds them itself (it knows the
        // device arch); the core has no use for one found among the plugins.
        const auto *vt = static_cast<const rf_kernel_pack_vtable *>(info->vtable);
        const bool has_arch = vt->struct_size >= offsetof(rf_kernel_pack_vtable, arch) + sizeof vt->arch && vt->arch;
        lp.record.status = std::string("kernel pack") + (has_arch ? std::string(" for ") + vt->arch : "") +
                           ", not used from here: a GPU backend loads packs from kernel_pack_dirs or its \"packs\" option";
        return lp;
    }
    if (const char *slot = missing_required_slot(*info)) {
        lp.record.status = std::string("incomplete ") + kind_name(info->kind) + " vtable: no '" + slot +
                           "' slot (struct_size " + std::to_string(*static_cast<const uint32_t *>(info->vtable)) + ")";
        return lp;
    }
    lp.info = info;
    lp.library = std::static_pointer_cast<void>(lib);
    lp.record.loaded = true;
    lp.record.status = std::string("loaded (") + kind_name(info->kind) + ")";
    return lp;
}

std::string backends_found(const std::vector<LoadedPlugin> &plugins) {
    std::vector<std::string> names;
    for (const auto &p : plugins)
        if (p.info && p.info->kind == RF_PLUGIN_BACKEND && std::find(names.begin(), names.end(), p.info->name) == names.end())
            names.emplace_back(p.info->name);
    return names.empty() ? "none" : join(names);
}

std::vector<std::string> plugin_search_path(const Config &config) {
    std::vector<std::string> dirs = config.plugin_dirs;
    if (const char *env = std::getenv("ROCMFORGE_PLUGIN_PATH")) {
        std::string s = env;
        size_t start = 0;
        while (start <= s.size()) {
            size_t end = s.find(':', start);
            if (end == std::string::npos) end = s.size();
            if (end > start) dirs.push_back(s.substr(start, end - start));
            start = end + 1;
        }
    }
    const fs::path exe = executable_dir();
    // Build tree (the executable lives in build/tools/), then the install layout.
    for (const char *rel : {".", "../backends/cpu", "../backends/hip", "../profiler", "../plugins"})
        dirs.push_back((exe / rel).lexically_normal().string());
    for (auto &dir : installed_plugin_dirs()) dirs.push_back(std::move(dir));
    return dirs;
}

std::vector<LoadedPlugin> discover_plugins(const Config &config) {
    std::set<std::string> explicit_dirs(config.plugin_dirs.begin(), config.plugin_dirs.end());
    std::vector<LoadedPlugin> out;
    std::set<std::string> seen;
    for (const auto &dir : plugin_search_path(config)) {
        std::error_code ec;
        const bool is_explicit = explicit_dirs.count(dir) > 0;
        if (!fs::is_directory(dir, ec)) {
            if (is_explicit)
                throw UsageError("plugin folder '" + dir + "' (from " + config.source +
                                 ") does not exist or is not a folder");
            spdlog::debug("plugin search: {} (absent)", dir);
            continue;
        }
        std::vector<fs::path> files;
        for (const auto &entry : fs::directory_iterator(dir, ec)) {
            const auto &p = entry.path();
            if (!entry.is_regular_file(ec) || !is_shared_object(p)) continue;
            if (!is_explicit && p.filename().string().rfind("rocmforge-", 0) != 0) continue;
            files.push_back(p);
        }
        std::sort(files.begin(), files.end());
        for (const auto &p : files) {
            auto canon = fs::weakly_canonical(p, ec).string();
            if (!seen.insert(canon).second) continue;
            auto lp = load_plugin_file(p.string());
            spdlog::debug("plugin candidate {}: {}", p.string(), lp.record.status);
            out.push_back(std::move(lp));
        }
    }
    return out;
}

} // namespace rf
