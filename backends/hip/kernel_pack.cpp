#include "kernel_pack.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "embedded_kernels.h" // generated: kEmbeddedKernelSource, kEmbeddedKernelSourceSha256
#include "sha256.h"
#include "stamps.h"

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

bool load_code(const void *code, const std::vector<std::string> &required, KernelModule &out, const std::string &what,
               std::string &err) {
    hipModule_t mod = nullptr;
    if (hipError_t e = hipModuleLoadData(&mod, code)) {
        err = what + ": " + gpu_error("hipModuleLoadData", e);
        return false;
    }
    if (!resolve(mod, required, out, what, err)) {
        hipModuleUnload(mod);
        return false;
    }
    return true;
}

// The device address of the module's global `name` of `size` bytes, or null when it has none or
// one of another size.
void *module_global(hipModule_t mod, const char *name, size_t size) {
    void *p = nullptr;
    size_t bytes = 0;
    if (hipModuleGetGlobal(&p, &bytes, mod, name) != hipSuccess || bytes != size) return nullptr;
    return p;
}

// The module's stamp constant (kernels/stamps.h), or null when it has none (an older or an
// out-of-tree pack: its kernels write no timestamps) or one of another size.
void *stamp_ctl(hipModule_t mod) { return module_global(mod, RF_STAMP_CTL_SYMBOL, sizeof(rf_stamp_ctl)); }

// The base module's stamp constant and kernel (both or neither).
void find_base_stamps(KernelModule &out) {
    void *ctl = stamp_ctl(out.module);
    hipFunction_t mark = nullptr;
    if (!ctl || hipModuleGetFunction(&mark, out.module, RF_STAMP_MARK_KERNEL) != hipSuccess || !mark) return;
    out.stamp_ctls.push_back(ctl);
    out.stamp_mark = mark;
    out.base_stamps = true;
}

std::vector<std::string> kernel_list(const rf_kernel_pack_vtable &vt) {
    return std::vector<std::string>(vt.kernel_names, vt.kernel_names + vt.n_kernels);
}

// Every kernel `p` lists is in its loaded code object `mod` (a list that promises more is refused).
bool verify_listed(const PackPlugin &p, hipModule_t mod, std::string &err) {
    for (const std::string &name : kernel_list(*p.vt)) {
        hipFunction_t f = nullptr;
        if (hipError_t e = hipModuleGetFunction(&f, mod, name.c_str())) {
            err = "kernel pack " + p.path + " lists kernel '" + name + "' that its code object lacks (" +
                  gpu_error("hipModuleGetFunction", e) + ")";
            return false;
        }
    }
    return true;
}

// The base kernels from `p` (its list was checked against `required` when the pack was opened).
// Only the kernels the backend launches are kept (the thread-stack trim looks at those, as with
// the JIT), plus those of the pack's fusions.
bool load_base_pack(const PackPlugin &p, const std::vector<std::string> &required, KernelModule &out, std::string &err) {
    std::vector<std::string> used = required;
    for (const rf_fusion *f : p.fusions) used.emplace_back(f->kernel);
    if (!load_code(p.vt->code, used, out, "kernel pack " + p.path, err)) return false;
    if (!verify_listed(p, out.module, err)) {
        unload_kernels(out);
        return false;
    }
    std::string fusions;
    for (const rf_fusion *f : p.fusions) fusions += (fusions.empty() ? "" : ", ") + std::string(f->name);
    out.origin = "pack " + p.path + " (" + p.name + " " + p.version + ", arch " + p.vt->arch + ", sha256 verified, " +
                 std::to_string(p.vt->n_kernels) + " kernels, fusions: " + (fusions.empty() ? "none" : fusions) + ")";
    return true;
}

// The fusions of every pack, each pack's code object loaded once (that of `base`, the pack whose
// base kernels are in use, is out.module; null when they were JIT-compiled).
bool load_pack_fusions(const PackPlugin *base, KernelModule &out, std::string &err) {
    std::string listed;
    for (const PackPlugin &p : out.packs) {
        if (&p == base) { // load_base_pack listed its fusions in the origin
            for (const rf_fusion *f : p.fusions)
                out.fusions.push_back({f, out.functions.at(f->kernel), (p.vt->flags & RF_PACK_KERNELS_WAIT) != 0, out.base_stamps, &p,
                                       out.module});
            continue;
        }
        KernelModule own;
        if (!load_code(p.vt->code, kernel_list(*p.vt), own, "kernel pack " + p.path, err)) return false;
        out.pack_modules.push_back(own.module); // resolving the whole list verified it
        void *ctl = stamp_ctl(own.module);
        if (ctl) out.stamp_ctls.push_back(ctl);
        std::string names;
        for (const rf_fusion *f : p.fusions) {
            out.fusions.push_back({f, own.functions.at(f->kernel), (p.vt->flags & RF_PACK_KERNELS_WAIT) != 0, ctl != nullptr, &p,
                                   own.module});
            names += (names.empty() ? "" : ", ") + std::string(f->name);
        }
        listed += "; fusion pack " + p.path + " (" + p.name + " " + p.version + ", sha256 verified): " +
                  (names.empty() ? "no fusions" : names);
    }
    out.origin += listed;
    for (PackFusion &pf : out.fusions) pf.rule = "pack fusion '" + std::string(pf.fusion->name) + "'";
    return true;
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
    // sm_90 as sm_90a, as the sm_90 pack is built (backends/hip/meson.build): wgmma.
    const std::string arch_opt = "--gpu-architecture=" + arch + (arch == "sm_90" ? "a" : "");
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
        if (load_code(code.data(), required, out, "JIT cache " + file.string(), e2)) {
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
    if (!load_code(code.data(), required, out, "JIT code for " + opt.arch, err)) return false;
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
    PackSet set;
    if (opt.jit != "force") {
        // A broken pack, or one for another arch or ABI, fails init here: never skipped, never mid-run.
        if (!find_packs({opt.arch, opt.pack_files, opt.pack_dirs}, required, set, err)) return false;
    }
    out.packs = std::move(set.packs);
    const PackPlugin *base = nullptr;
    for (const PackPlugin &p : out.packs)
        if (!base && p.base()) base = &p;
    if (base) {
        if (!load_base_pack(*base, required, out, err)) return false;
        find_base_stamps(out);
    } else {
        const std::string why = opt.jit == "force" ? "jit=force in config" : set.looked_for + "; none carries the base kernels";
        if (opt.jit == "off") {
            err = "no kernel pack for the device arch " + opt.arch + " (" + why + ") and JIT is off in the config";
            return false;
        }
        if (!load_jit(opt, required, out, why, err)) return false;
        find_base_stamps(out);
    }
    out.wgmma = module_global(out.module, "rf_feature_wgmma", sizeof(int)) != nullptr; // a feature marker of the kernel sources
    if (!load_pack_fusions(base, out, err)) {
        unload_kernels(out);
        return false;
    }
    return true;
}

hipFunction_t claim_kernel(KernelModule &m, const PackFusion &pf, const char *name, std::string &err) {
    const std::string key = std::to_string((uintptr_t)pf.module) + ":" + name;
    if (auto it = m.claim_kernels.find(key); it != m.claim_kernels.end()) return it->second;
    if (!pack_lists_kernel(*pf.pack->vt, name)) {
        err = std::string("launches kernel '") + name + "' that the pack does not list";
        return nullptr;
    }
    hipFunction_t f = nullptr;
    if (hipError_t e = hipModuleGetFunction(&f, pf.module, name)) { // listed kernels were verified at load
        err = std::string("kernel '") + name + "': " + gpu_error("hipModuleGetFunction", e);
        return nullptr;
    }
    m.claim_kernels[key] = f;
    return f;
}

void unload_kernels(KernelModule &m) {
    m.claim_kernels.clear();
    m.fusions.clear();
    m.stamp_ctls.clear();
    m.stamp_mark = nullptr;
    m.base_stamps = false;
    m.wgmma = false;
    for (hipModule_t mod : m.pack_modules) hipModuleUnload(mod);
    m.pack_modules.clear();
    if (m.module) hipModuleUnload(m.module);
    m.module = nullptr;
    m.functions.clear();
    m.packs.clear(); // after the modules: the code bytes live in the packs' shared objects
}

} // namespace rf_hip
