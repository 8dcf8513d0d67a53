#include "pack_plugin.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <set>

#include "sha256.h"

namespace fs = std::filesystem;

namespace rf_hip {
namespace {

constexpr const char *kPrefix = "rocmforge-pack-";

bool ends_with(const std::string &s, const std::string &tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string version(uint32_t major, uint32_t minor) { return std::to_string(major) + "." + std::to_string(minor); }

const char *kind_name(int kind) {
    switch (kind) {
    case RF_PLUGIN_BACKEND: return "a backend";
    case RF_PLUGIN_PROFILER: return "a profiler";
    default: return "an unknown kind of";
    }
}

// The fusion table: every entry complete and launching a listed kernel.
bool check_fusions(const rf_kernel_pack_vtable &vt, const std::string &where, std::vector<const rf_fusion *> &out,
                   std::string &err) {
    if (vt.n_fusions < 0 || (vt.n_fusions > 0 && !vt.fusions)) {
        err = where + ": bad fusion table (n_fusions " + std::to_string(vt.n_fusions) + ")";
        return false;
    }
    for (int32_t i = 0; i < vt.n_fusions; ++i) {
        const rf_fusion *f = vt.fusions[i];
        const std::string which = where + ": fusion " + std::to_string(i);
        if (!f || f->struct_size < offsetof(rf_fusion, host_run)) { err = which + " is missing or too short"; return false; }
        if (!f->name || !*f->name) { err = which + " has no name"; return false; }
        const std::string named = where + ": fusion '" + f->name + "'";
        if (!f->claim) { err = named + " has no claim function"; return false; }
        if (f->first_op <= RF_OP_NONE || f->first_op >= RF_OP_COUNT) {
            err = named + " starts at op " + std::to_string(f->first_op) + ", which is no op of this runtime";
            return false;
        }
        if (!f->kernel || !pack_lists_kernel(vt, f->kernel)) {
            err = named + " launches kernel '" + std::string(f->kernel ? f->kernel : "") + "' that the pack does not list";
            return false;
        }
        out.push_back(f);
    }
    return true;
}

} // namespace

bool pack_lists_kernel(const rf_kernel_pack_vtable &vt, const char *name) {
    for (int32_t i = 0; i < vt.n_kernels; ++i)
        if (std::string(vt.kernel_names[i]) == name) return true;
    return false;
}

bool pack_file_for_arch(const std::string &file_name, const std::string &arch) {
    return file_name.rfind(kPrefix, 0) == 0 && ends_with(file_name, "-" + arch + ".so") &&
           file_name.size() >= std::string(kPrefix).size() + arch.size() + 3;
}

bool open_pack(const std::string &path, const std::string &arch, const std::vector<std::string> &base_kernels,
               PackPlugin &out, std::string &err) {
    const std::string where = "kernel pack " + path;
    void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        err = where + ": cannot load: " + (e ? e : "unknown dlopen error");
        return false;
    }
    std::shared_ptr<void> lib(h, [](void *p) { dlclose(p); });
    auto entry = reinterpret_cast<rf_plugin_entry_fn>(dlsym(h, RF_PLUGIN_ENTRY_SYMBOL));
    if (!entry) { err = where + ": not a ROCmForge plugin (no symbol " + RF_PLUGIN_ENTRY_SYMBOL + ")"; return false; }
    const rf_plugin_info *info = entry();
    if (!info || !info->vtable || !info->name) { err = where + ": plugin entry returned no plugin description"; return false; }
    if (info->abi_major != RF_ABI_MAJOR) {
        err = where + ": ABI version " + version(info->abi_major, info->abi_minor) + " does not match this runtime's " +
              version(RF_ABI_MAJOR, RF_ABI_MINOR) + ": rebuild the pack against this runtime's headers";
        return false;
    }
    if (info->kind != RF_PLUGIN_KERNEL_PACK) {
        err = where + ": " + kind_name(info->kind) + " plugin ('" + info->name + "'), not a kernel pack";
        return false;
    }
    const auto *vt = static_cast<const rf_kernel_pack_vtable *>(info->vtable);
    // Every member of the 2.0 vtable is read; later minor versions append.
    if (vt->struct_size < offsetof(rf_kernel_pack_vtable, fusions) + sizeof vt->fusions) {
        err = where + ": pack vtable too short (struct_size " + std::to_string(vt->struct_size) + ")";
        return false;
    }
    const std::string built_for = vt->arch ? vt->arch : "";
    if (built_for != arch) {
        err = where + ": built for arch '" + built_for + "' but the device needs '" + arch + "'";
        return false;
    }
    if (vt->kargs_version != RF_KARGS_VERSION) {
        err = where + ": kernel argument version " + std::to_string(vt->kargs_version) + " but this backend's is " +
              std::to_string(RF_KARGS_VERSION) + " (rocmforge/kernel_args.h): rebuild the pack";
        return false;
    }
    if (!vt->code || vt->code_size == 0) { err = where + ": carries no code object"; return false; }
    const std::string sum = sha256_hex(vt->code, (size_t)vt->code_size);
    const std::string declared = vt->code_sha256 ? vt->code_sha256 : "";
    if (sum != declared) {
        err = where + ": code object checksum mismatch (pack declares " + (declared.empty() ? "none" : declared) +
              ", code object is " + sum + ")";
        return false;
    }
    if (vt->n_kernels <= 0 || !vt->kernel_names) { err = where + ": lists no kernels"; return false; }
    std::set<std::string> names;
    for (int32_t i = 0; i < vt->n_kernels; ++i) {
        if (!vt->kernel_names[i] || !*vt->kernel_names[i]) { err = where + ": kernel name " + std::to_string(i) + " is empty"; return false; }
        names.insert(vt->kernel_names[i]);
    }
    if (vt->flags & RF_PACK_BASE_KERNELS)
        for (const auto &k : base_kernels)
            if (!names.count(k)) {
                err = where + " (base kernels for " + arch + ") lacks kernel '" + k + "' that this backend needs: rebuild the pack";
                return false;
            }
    std::vector<const rf_fusion *> fusions;
    if (!check_fusions(*vt, where, fusions, err)) return false;
    out = PackPlugin{};
    out.path = path;
    out.name = info->name;
    out.version = info->version ? info->version : "";
    out.library = std::move(lib);
    out.vt = vt;
    out.fusions = std::move(fusions);
    return true;
}

bool find_packs(const PackSearch &search, const std::vector<std::string> &base_kernels, PackSet &out, std::string &err) {
    out = PackSet{};
    std::set<std::string> seen;
    auto add = [&](const fs::path &p) {
        std::error_code ec;
        const std::string canon = fs::weakly_canonical(p, ec).string();
        if (!seen.insert(ec ? p.string() : canon).second) return true;
        PackPlugin pk;
        if (!open_pack(p.string(), search.arch, base_kernels, pk, err)) return false;
        out.packs.push_back(std::move(pk));
        return true;
    };
    for (const auto &f : search.files) {
        std::error_code ec;
        if (!fs::is_regular_file(f, ec)) { err = "kernel pack " + f + " (from the config's \"packs\") does not exist"; return false; }
        if (!add(f)) return false;
    }
    std::string dirs, present;
    for (const auto &d : search.dirs) {
        dirs += (dirs.empty() ? "" : ", ") + d;
        std::error_code ec;
        std::vector<fs::path> mine;
        for (const auto &e : fs::directory_iterator(d, ec)) {
            const std::string n = e.path().filename().string();
            if (n.rfind(kPrefix, 0) != 0 || !ends_with(n, ".so")) continue;
            present += (present.empty() ? "" : ", ") + n;
            if (pack_file_for_arch(n, search.arch)) mine.push_back(e.path());
        }
        std::sort(mine.begin(), mine.end());
        for (const auto &p : mine)
            if (!add(p)) return false;
    }
    out.looked_for = "looked for rocmforge-pack-" + search.arch + ".so in [" + dirs + "]; packs present: " +
                     (present.empty() ? "none" : present);
    return true;
}

} // namespace rf_hip
