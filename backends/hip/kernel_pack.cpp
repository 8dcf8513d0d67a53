#include "kernel_pack.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "embedded_kernels.h" // generated: kEmbeddedKernelSource, kEmbeddedKernelSourceSha256
#include "pack_manifest.h"
#include "sha256.h"

namespace fs = std::filesystem;

namespace rf_hip {
namespace {

bool read_file(const fs::path &p, std::string &out) {
    std::ifstream f(p, std::ios::binary);
    if (!f) return false;
    std::ostringstream ss;
    ss << f.rdbuf();
    out = ss.str();
    return true;
}

std::string pack_manifest_name(const std::string &arch) { return "rocmforge-kernels-" + arch + ".json"; }

// Archs of the packs present in the search path (for messages about a missing arch).
std::string packs_present(const std::vector<std::string> &dirs) {
    std::string list;
    for (const auto &d : dirs) {
        std::error_code ec;
        for (const auto &e : fs::directory_iterator(d, ec)) {
            const std::string n = e.path().filename().string();
            if (n.rfind("rocmforge-kernels-", 0) == 0 && e.path().extension() == ".json")
                list += (list.empty() ? "" : ", ") + n.substr(18, n.size() - 18 - 5);
        }
    }
    return list.empty() ? "none" : list;
}

bool resolve(hipModule_t mod, const std::vector<std::string> &required, KernelModule &out, const std::string &what,
             std::string &err) {
    for (const auto &name : required) {
        hipFunction_t f = nullptr;
        if (hipError_t e = hipModuleGetFunction(&f, mod, name.c_str())) {
            err = what + " has no kernel '" + name + "' (" + gpu_error("hipModuleGetFunction", e) + ")";
            return false;
        }
        out.functions[name] = f;
    }
    out.module = mod;
    return true;
}

bool load_code(const std::string &code, const std::vector<std::string> &required, KernelModule &out,
               const std::string &what, std::string &err) {
    hipModule_t mod = nullptr;
    if (hipError_t e = hipModuleLoadData(&mod, code.data())) {
        err = what + ": " + gpu_error("hipModuleLoadData", e);
        return false;
    }
    if (!resolve(mod, required, out, what, err)) {
        hipModuleUnload(mod);
        return false;
    }
    return true;
}

// 1: loaded, 0: no pack for this arch in `dir`, -1: a pack exists but is unusable (err set).
int try_pack(const fs::path &dir, const std::string &arch, const std::vector<std::string> &required,
             KernelModule &out, std::string &err) {
    const fs::path mpath = dir / pack_manifest_name(arch);
    std::string text;
    if (!read_file(mpath, text)) return 0;
    const std::string where = "kernel pack " + mpath.string();
    PackManifest m;
    if (!check_pack_manifest(text, arch, required, where, m, err)) return -1;
    std::string code;
    const fs::path cpath = dir / m.code;
    if (m.code.empty() || !read_file(cpath, code)) { err = where + ": code object '" + cpath.string() + "' missing"; return -1; }
    const std::string sum = sha256_hex(code.data(), code.size());
    if (sum != m.sha256) {
        err = where + ": checksum mismatch for " + cpath.string() + " (manifest " + m.sha256 + ", file " + sum + ")";
        return -1;
    }
    if (!load_code(code, required, out, where, err)) return -1;
    out.origin = "AOT pack " + cpath.string() + " (arch " + arch + ", sha256 verified, " + std::to_string(m.n_kernels) +
                 " kernels, " + m.compiler + ")";
    return 1;
}

std::string compiler_version() {
    int maj = 0, min = 0;
    hiprtcVersion(&maj, &min);
    int drv = 0;
    hipDriverGetVersion(&drv);
    return std::string(RF_GPU_VENDOR) + "-rtc-" + std::to_string(maj) + "." + std::to_string(min) + "-drv-" + std::to_string(drv);
}

bool jit_compile(const std::string &arch, std::string &code, std::string &err) {
#if defined(RF_HIP_NVIDIA)
    const std::string arch_opt = "--gpu-architecture=" + arch;
    const char *opts[] = {arch_opt.c_str(), "-std=c++17"}; // NVRTC optimizes by default
#else
    const std::string arch_opt = "--offload-arch=" + arch;
    const char *opts[] = {arch_opt.c_str(), "-std=c++17", "-O3"};
#endif
    hiprtcProgram prog = nullptr;
    if (hiprtcResult r = hiprtcCreateProgram(&prog, kEmbeddedKernelSource, "rocmforge_kernels.hip", 0, nullptr, nullptr)) {
        err = std::string("hipRTC create: ") + hiprtcGetErrorString(r);
        return false;
    }
    const hiprtcResult r = hiprtcCompileProgram(prog, (int)(sizeof opts / sizeof opts[0]), opts);
    if (r != HIPRTC_SUCCESS) {
        size_t n = 0;
        hiprtcGetProgramLogSize(prog, &n);
        std::string log(n, '\0');
        if (n) hiprtcGetProgramLog(prog, log.data());
        err = std::string("JIT compile of the kernels for ") + arch + " failed: " + hiprtcGetErrorString(r) + "\n" + log;
        hiprtcDestroyProgram(&prog);
        return false;
    }
    size_t n = 0;
    hiprtcGetCodeSize(prog, &n);
    code.assign(n, '\0');
    hiprtcGetCode(prog, code.data());
    hiprtcDestroyProgram(&prog);
    return true;
}

bool load_jit(const KernelLoadOptions &opt, const std::vector<std::string> &required, KernelModule &out,
              const std::string &why, std::string &err) {
    if (!jit_available()) {
        err = "no kernel pack for arch " + opt.arch + " (" + why + ") and the run-time compiler is unavailable (libnvrtc not found)";
        return false;
    }
    const std::string compiler = compiler_version();
    const std::string key = sha256_hex((std::string(kEmbeddedKernelSourceSha256) + "|" + opt.arch + "|" + compiler).data(),
                                       64 + 2 + opt.arch.size() + compiler.size());
    const fs::path dir = opt.cache_dir.empty() ? fs::path(default_cache_dir()) : fs::path(opt.cache_dir);
    const fs::path file = dir / ("kernels-" + opt.arch + "-" + key.substr(0, 24) + ".bin");
    std::string code;
    if (read_file(file, code) && !code.empty()) {
        std::string e2;
        if (load_code(code, required, out, "JIT cache " + file.string(), e2)) {
            out.origin = "JIT (" + why + "), cached code " + file.string() + " [" + compiler + "]";
            return true;
        }
        // A stale or damaged cache entry is recompiled below.
    }
    if (!jit_compile(opt.arch, code, err)) return false;
    std::error_code ec;
    fs::create_directories(dir, ec);
    const fs::path tmp = file.string() + ".tmp" + std::to_string(::getpid());
    bool cached = false;
    {
        std::ofstream f(tmp, std::ios::binary);
        cached = f && f.write(code.data(), (std::streamsize)code.size());
    }
    if (cached) fs::rename(tmp, file, ec); // atomic: concurrent processes never see half a file
    cached = cached && !ec;
    if (!load_code(code, required, out, "JIT code for " + opt.arch, err)) return false;
    out.origin = "JIT (" + why + "), compiled now [" + compiler + "]" +
                 (cached ? ", cached as " + file.string() : ", cache not writable: " + dir.string());
    return true;
}

} // namespace

std::string default_cache_dir() {
    if (const char *d = std::getenv("ROCMFORGE_CACHE_DIR"); d && *d) return d;
    if (const char *d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::string(d) + "/rocmforge";
    if (const char *h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/rocmforge";
    return "/tmp/rocmforge-cache";
}

bool load_kernels(const KernelLoadOptions &opt, const std::vector<std::string> &required, KernelModule &out,
                  std::string &err) {
    if (opt.jit != "force") {
        for (const auto &d : opt.pack_dirs) {
            const int r = try_pack(d, opt.arch, required, out, err);
            if (r == 1) return true;
            if (r < 0) return false; // a broken pack for our arch is an error, never silently skipped
        }
    }
    std::string dirs;
    for (const auto &d : opt.pack_dirs) dirs += (dirs.empty() ? "" : ", ") + d;
    const std::string why = opt.jit == "force" ? "jit=force in config"
                                               : "no pack for " + opt.arch + " in [" + dirs + "]; packs present: " + packs_present(opt.pack_dirs);
    if (opt.jit == "off") {
        err = "no kernel pack for the device arch " + opt.arch + " (" + why + ") and JIT is off in the config";
        return false;
    }
    return load_jit(opt, required, out, why, err);
}

void unload_kernels(KernelModule &m) {
    if (m.module) hipModuleUnload(m.module);
    m.module = nullptr;
    m.functions.clear();
}

} // namespace rf_hip
