// The HIP backend plugin: ABI entry point, init (config, device, arch, kernels), vtable.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <new>

#include "backend.h"
#include "memory.h"
#include "ops.h"
#include "options.h"
#include "pack_fusion.h"

namespace rf_hip {

int fail(char *err, size_t len, int code, const std::string &msg) {
    if (err && len) std::snprintf(err, len, "%s", msg.c_str());
    return code;
}

bool make_current(Backend &b, std::string &err) {
    if (hipError_t e = hipSetDevice(b.ordinal)) { err = gpu_error("hipSetDevice", e); return false; }
    return true;
}

namespace {

std::string plugin_dir() {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void *>(&plugin_dir), &info) && info.dli_fname)
        return std::filesystem::absolute(info.dli_fname).parent_path().string();
    return ".";
}

// Where packs live without a kernel_pack_dirs in the config: <plugin dir>/packs when installed
// (lib/rocmforge/packs), the build tree's plugins/packs next to backends/hip, the plugin's folder.
std::vector<std::string> default_pack_dirs() {
    const std::filesystem::path here = plugin_dir();
    return {(here / "packs").string(), (here / "../../plugins/packs").lexically_normal().string(), here.string()};
}

// Device arch string as packs name it: "sm_90" or "gfx1100" (feature suffixes dropped).
bool device_arch(int ordinal, hipDevice_t device, std::string &arch, std::string &err) {
#if defined(RF_HIP_NVIDIA)
    (void)ordinal;
    int major = 0, minor = 0;
    hipDeviceGetAttribute(&major, hipDeviceAttributeComputeCapabilityMajor, device);
    hipDeviceGetAttribute(&minor, hipDeviceAttributeComputeCapabilityMinor, device);
    arch = "sm_" + std::to_string(major) + std::to_string(minor);
#else
    (void)device;
    hipDeviceProp_t p{};
    if (hipError_t e = hipGetDeviceProperties(&p, ordinal)) { err = gpu_error("hipGetDeviceProperties", e); return false; }
    arch = p.gcnArchName;
    arch = arch.substr(0, arch.find(':'));
#endif
    return true;
}
bool query_arch(Backend &b, std::string &err) { return device_arch(b.ordinal, b.device, b.device_arch, err); }

// The GPUs the driver reports, without creating a context (no kernels loaded): the config's
// "device" (--device N) picks one of them by index.
int list_devices(rf_device_info *out, int32_t max, int32_t *count, char *err, size_t len) {
    if (!count || (max > 0 && !out)) return fail(err, len, RF_ERR_INVALID, "hip backend: list_devices needs count (and out)");
    *count = 0;
    std::string e;
    if (!gpu_runtime_load(e)) return fail(err, len, RF_ERR_NO_DEVICE, e);
    if (hipError_t r = hipInit(0)) return fail(err, len, RF_ERR_NO_DEVICE, gpu_error("hipInit (no usable GPU driver?)", r));
    int n = 0;
    if (hipGetDeviceCount(&n) != hipSuccess) n = 0;
    *count = n;
    for (int i = 0; i < n && i < max; ++i) {
        rf_device_info &d = out[i];
        d = rf_device_info{};
        hipDevice_t dev{};
        if (hipError_t r = hipDeviceGet(&dev, i)) return fail(err, len, RF_ERR_DEVICE, gpu_error("hipDeviceGet", r));
        hipDeviceGetName(d.name, sizeof d.name - 1, dev);
        size_t total = 0;
        hipDeviceTotalMem(&total, dev);
        d.total_memory = total;
        std::string arch;
        if (!device_arch(i, dev, arch, e)) return fail(err, len, RF_ERR_DEVICE, e);
        std::snprintf(d.arch, sizeof d.arch, "%s", arch.c_str());
        d.kind = RF_DEVICE_GPU;
    }
    return RF_OK;
}

// A listed device's memory now (ABI 2.2), for `rocmforge info`: makes the device current on this
// thread, creating its context if no instance did (every slot with a ctx makes its own device
// current first, so instances are not disturbed).
int device_memory(int32_t index, uint64_t *free_bytes, uint64_t *total_bytes, char *err, size_t len) {
    if (!free_bytes || !total_bytes) return fail(err, len, RF_ERR_INVALID, "hip backend: device_memory needs free and total");
    std::string e;
    if (!gpu_runtime_load(e)) return fail(err, len, RF_ERR_NO_DEVICE, e);
    if (hipError_t r = hipInit(0)) return fail(err, len, RF_ERR_NO_DEVICE, gpu_error("hipInit (no usable GPU driver?)", r));
    int n = 0;
    if (hipGetDeviceCount(&n) != hipSuccess) n = 0;
    if (index < 0 || index >= n)
        return fail(err, len, RF_ERR_INVALID, "hip backend: no device " + std::to_string(index) + " (" + std::to_string(n) + " found)");
    if (hipError_t r = hipSetDevice(index)) return fail(err, len, RF_ERR_DEVICE, gpu_error("hipSetDevice", r));
    size_t free_b = 0, total = 0;
    if (hipError_t r = hipMemGetInfo(&free_b, &total)) return fail(err, len, RF_ERR_DEVICE, gpu_error("hipMemGetInfo", r));
    *free_bytes = free_b;
    *total_bytes = total;
    return RF_OK;
}

// The driver reserves the per-thread stack limit (1 KiB by default) for every thread the GPU
// can hold at once: 264 MiB on an H100, a quarter of the runtime's overhead above weights + KV
// cache. Our kernels need ~100 bytes (the frames of double-precision sin/cos), so the limit is
// lowered to the largest local size of the loaded kernels (at least 128 bytes); the driver
// raises it again for any kernel that needs more. Best effort: a failure keeps the default.
void trim_thread_stack(Backend &b) {
#if defined(RF_HIP_NVIDIA)
    int most = 0;
    for (const auto &[name, f] : b.kernels.functions) {
        int bytes = 0;
        if (rf_local_bytes(f, &bytes) != hipSuccess) return;
        most = std::max(most, bytes);
    }
    rf_set_thread_stack((size_t)std::max(128, (most + 15) / 16 * 16));
#else
    (void)b;
#endif
}

// The options that are Backend state (backend.h) and the packs' options (rf_pack_options).
void apply_options(Backend &b) {
    const Options &o = b.options;
    b.sync_each_node = o.sync_each_node;
    b.queue.set_graphs(graphs_available() && !o.sync_each_node && o.graphs);
#if defined(RF_HIP_NVIDIA)
    // Programmatic edges need sm_90+ devices running sm_90+ code.
    b.queue.set_programmatic(nvidia_sm(b.device_arch) >= 90 && nvidia_sm(b.arch) >= 90 && o.pdl);
#endif
    b.queue.set_beside(o.beside);
    b.fuse = !o.sync_each_node && o.fuse; // off with per-node sync, so a fault names its node
    b.attention_stream = o.attention_stream;
    b.attention_mma = o.attention_mma;
    b.att_blocks_per_sm = o.attention_blocks_per_sm;
    b.att_wide_max = o.attention_wide_max;
    b.att_wide8_blocks = o.attention_wide8_blocks >= 0 ? o.attention_wide8_blocks : b.multiprocessors + 1;
    b.att_wide4_blocks = o.attention_wide4_blocks >= 0 ? o.attention_wide4_blocks : 2 * b.multiprocessors + 1;
    b.h16_tokens = o.h16_tokens;
    b.h16_splits = o.h16_splits;
    b.h16_wgmma = o.h16_wgmma;
    b.q16w_min = o.q16w_min_tokens;
    b.q16w_kquants = o.q16w_kquants == "on" ? 1 : o.q16w_kquants == "off" ? 0 : -1;
    b.q16w_tokens = o.q16w_tokens;
    b.f16_prefill_acts = o.f16_prefill_acts;
    b.prefetch_weights = o.prefetch == "on" ? 1 : o.prefetch == "off" ? 0 : -1;
    b.prefetch_max_bytes = (uint64_t)o.prefetch_max_mb << 20;
    b.staging.on = o.staged_uploads;
    b.mvq_max_cols = o.mvq_max_cols;
    b.reuse_walks = o.reuse_walks;
    b.trust_same = o.trust_same;
    b.observer.set_events(o.observer_events == "on" ? 1 : o.observer_events == "off" ? 0 : -1);
    b.pack_options = {sizeof(rf_pack_options),
                      b.prefetch_weights == 1 ? RF_PACK_PREFETCH_ALL : b.prefetch_weights == 0 ? RF_PACK_PREFETCH_NONE : RF_PACK_PREFETCH_SMALL,
                      o.norm_prefetch ? 1 : 0,
                      b.prefetch_max_bytes,
                      (uint64_t)o.prefetch_head_mb << 20,
                      o.norm_pieces,
                      o.norm_cluster_blocks};
}

int init(const char *config_json, void **ctx, char *err, size_t len) {
    Options cfg;
    std::string e;
    if (!parse_options(config_json, cfg, e)) return fail(err, len, RF_ERR_INVALID, e);
    if (!gpu_runtime_load(e)) return fail(err, len, RF_ERR_NO_DEVICE, e);
    if (hipError_t r = hipInit(0)) return fail(err, len, RF_ERR_NO_DEVICE, gpu_error("hipInit (no usable GPU driver?)", r));
    int count = 0;
    if (hipGetDeviceCount(&count) != hipSuccess || count == 0) return fail(err, len, RF_ERR_NO_DEVICE, "no GPU found");
    if (cfg.device < 0 || cfg.device >= count)
        return fail(err, len, RF_ERR_INVALID, "hip backend config: device " + std::to_string(cfg.device) + " but " +
                                                  std::to_string(count) + " GPU(s) present");
    auto *b = new (std::nothrow) Backend;
    if (!b) return fail(err, len, RF_ERR_OUT_OF_MEMORY, "host allocation failed");
    b->ordinal = cfg.device;
    b->options = cfg;
    auto bail = [&](int code, const std::string &m) { if (b->stream) hipStreamDestroy(b->stream); delete b; return fail(err, len, code, m); };
    if (hipError_t r = hipDeviceGet(&b->device, cfg.device)) return bail(RF_ERR_NO_DEVICE, gpu_error("hipDeviceGet", r));
    if (!make_current(*b, e)) return bail(RF_ERR_NO_DEVICE, e);
    char name[128] = {0};
    hipDeviceGetName(name, sizeof name - 1, b->device);
    b->name = name;
    size_t total = 0;
    hipDeviceTotalMem(&total, b->device);
    b->total_memory = total;
    hipDeviceGetAttribute(&b->multiprocessors, hipDeviceAttributeMultiprocessorCount, b->device);
    if (!query_arch(*b, e)) return bail(RF_ERR_DEVICE, e);
    b->arch = cfg.arch_override.empty() ? b->device_arch : cfg.arch_override;
    if (hipError_t r = hipStreamCreate(&b->stream)) return bail(RF_ERR_DEVICE, gpu_error("hipStreamCreate", r));
    apply_options(*b);
    if (cfg.stats) b->stats.on = hipEventCreate(&b->stats.ev[0]) == hipSuccess && hipEventCreate(&b->stats.ev[1]) == hipSuccess;

    KernelLoadOptions opt;
    opt.arch = b->arch;
    opt.pack_dirs = cfg.kernel_pack_dirs.empty() ? default_pack_dirs() : cfg.kernel_pack_dirs;
    opt.pack_files = cfg.packs;
    opt.jit = cfg.jit;
    opt.cache_dir = cfg.cache_dir;
    if (!load_kernels(opt, required_kernel_names(), b->kernels, e))
        return bail(RF_ERR_DEVICE, "hip backend on " + b->name + " (device arch " + b->device_arch +
                                          (cfg.arch_override.empty() ? "" : ", arch_override " + cfg.arch_override) + "): " + e);
    // Kernel timestamps for an observer (exec_observer.h): where the base kernels have the stamp
    // constant. NVIDIA: %globaltimer in ns, the default. AMD: the 100 MHz wall clock of RDNA
    // (s_memrealtime), untested on hardware: only with observer_events off.
    if (b->kernels.base_stamps) {
#if defined(RF_HIP_NVIDIA)
        b->observer.configure({b->kernels.stamp_ctls, b->kernels.stamp_mark, 1.0, rf_host_alloc_available()});
#else
        b->observer.configure({b->kernels.stamp_ctls, b->kernels.stamp_mark, 10.0, false});
#endif
    }
    // Threads per wave: 64 on GCN/CDNA (gfx9xx), 32 on RDNA and NVIDIA.
    b->pack_device = {sizeof(rf_pack_device), b->arch.c_str(), b->multiprocessors, b->arch.rfind("gfx9", 0) == 0 ? 64 : 32,
                      sizeof(rf_fusion_launch), pack_matmul_form, b, pack_matmul_tiles, &b->pack_options};
    trim_thread_stack(*b);
    int drv = 0;
    hipDriverGetVersion(&drv);
    b->details = b->kernels.origin + "; " + RF_GPU_VENDOR + " driver " + std::to_string(drv) + "; " +
                 std::to_string(b->multiprocessors) + " compute units" +
                 (cfg.arch_override.empty() ? "" : "; arch_override " + cfg.arch_override + " (device reports " + b->device_arch + ")");
    *ctx = b;
    return RF_OK;
}

double now_us() {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// GPU time of the previous compute() (its end event has completed once the host synchronized).
void collect_gpu_time(Backend &b) {
    if (!b.stats.ev_pending) return;
    float ms = 0;
    if (hipEventSynchronize(b.stats.ev[1]) == hipSuccess && hipEventElapsedTime(&ms, b.stats.ev[0], b.stats.ev[1]) == hipSuccess)
        b.stats.gpu_us += ms * 1e3;
    b.stats.ev_pending = false;
}

void print_stats(Backend &b) {
    collect_gpu_time(b);
    const auto &s = b.stats;
    const auto &q = b.queue.stats();
    const double n = s.computes ? (double)s.computes : 1.0;
    std::fprintf(stderr,
                 "hip stats: %llu compute() calls, %.1f nodes and %.1f launches each; per call: host in compute %.1f us (graph walk %.1f us, of it the saved lists' "
                 "lookup %.1f us; %llu calls reused a saved launch list, %llu of them told it was unchanged), "
                 "GPU %.1f us, host gap before it %.1f us (of which synchronize() %.1f us, uploads %.1f us in %.1f calls, downloads %.1f us in %.1f calls); "
                 "graphs: %llu built, %llu replays, %.1f node updates per replay, %llu direct flushes; %llu pack fusion claims; "
                 "observer: %s, %llu calls lost%s%s\n",
                 (unsigned long long)s.computes, s.nodes / n, q.launches / n, s.compute_host_us / n, s.walk_us / n,
                 s.lookup_us / n, (unsigned long long)s.reused_walks, (unsigned long long)s.same_calls, s.gpu_us / n, s.gap_us / n,
                 s.sync_us / n, s.upload_us / n, s.uploads / n, s.download_us / n, s.downloads / n, (unsigned long long)q.graph_builds,
                 (unsigned long long)q.graph_replays, q.graph_replays ? (double)q.node_updates / q.graph_replays : 0.0,
                 (unsigned long long)q.direct_flushes, (unsigned long long)s.pack_claims, b.observer.on() ? b.observer.mode().c_str() : "off",
                 (unsigned long long)b.observer.lost(), b.observer.last_loss().empty() ? "" : " (last: ",
                 b.observer.last_loss().empty() ? "" : (b.observer.last_loss() + ")").c_str());
}

void shutdown(void *ctx) {
    auto *b = static_cast<Backend *>(ctx);
    if (!b) return;
    std::string e;
    if (make_current(*b, e)) {
        hipStreamSynchronize(b->stream);
        b->observer.flush();        // what is still pending goes to the observer
        if (b->stats.on) {
            print_stats(*b);
            hipEventDestroy(b->stats.ev[0]);
            hipEventDestroy(b->stats.ev[1]);
        }
        b->queue.set_graphs(false); // destroys the graph while the context is current
        b->observer.release();      // after the graph, whose event-record nodes use its events
        for (auto *s : {&b->act_scratch, &b->att_scratch, &b->fq_scratch, &b->moe_scratch, &b->lent_scratch})
            if (s->ptr) hipFree(s->ptr);
        staging_release(*b);
        unload_kernels(b->kernels);
        hipStreamDestroy(b->stream);
    }
    delete b;
}

int device_info(void *ctx, rf_device_info *out) {
    auto *b = static_cast<Backend *>(ctx);
    *out = rf_device_info{};
    std::snprintf(out->name, sizeof out->name, "%s", b->name.c_str());
    std::snprintf(out->arch, sizeof out->arch, "%s", b->arch.c_str());
    std::snprintf(out->details, sizeof out->details, "%s", b->details.c_str());
    std::string e;
    size_t free_b = 0, total = 0;
    if (make_current(*b, e)) hipMemGetInfo(&free_b, &total);
    out->total_memory = total ? total : b->total_memory;
    out->free_memory = free_b;
    out->kind = RF_DEVICE_GPU;
    out->host_memory = 0;
    return RF_OK;
}

int v_buffer_alloc(void *ctx, uint64_t size, rf_buffer_desc *out, char *err, size_t len) {
    return buffer_alloc(*static_cast<Backend *>(ctx), size, out, err, len);
}
void v_buffer_free(void *ctx, void *handle) { buffer_free(*static_cast<Backend *>(ctx), handle); }
// The stream was waited for (a synchronize, a blocking copy): the steps before are complete
// (and are reported by the next compute(), after its launch), and the staged uploads' memory is
// free again.
void stream_idle(Backend &b) {
    staging_idle(b);
    b.observer.idle(b.stream);
}
// Small uploads are staged and not waited for (memory.h upload()).
int v_upload(void *ctx, void *dst, const void *src, uint64_t size, char *err, size_t len) {
    auto *b = static_cast<Backend *>(ctx);
    bool blocked = true;
    const int st = upload(*b, dst, src, size, &blocked, err, len);
    if (st == RF_OK && blocked) stream_idle(*b);
    return st;
}
int v_download(void *ctx, void *dst, const void *src, uint64_t size, char *err, size_t len) {
    auto *b = static_cast<Backend *>(ctx);
    const int st = copy(*b, dst, src, size, false, err, len);
    if (st == RF_OK) stream_idle(*b);
    return st;
}

// Option host_pin false: refuses (the core then downloads into pageable memory).
int v_host_pin(void *ctx, void *ptr, uint64_t size, char *err, size_t len) {
    auto *b = static_cast<Backend *>(ctx);
    if (!b->options.host_pin) return fail(err, len, RF_ERR_UNSUPPORTED, "host_pin off (hip backend option host_pin false)");
    return host_pin(*b, ptr, size, err, len);
}
void v_host_unpin(void *ctx, void *ptr) { host_unpin(*static_cast<Backend *>(ctx), ptr); }

int supports_op(void *, const rf_node *node) { return node && unsupported_reason(*node).empty() ? 1 : 0; }

// With an observer, the same launches and the same graph replay: the kernels write timestamps
// (or, with events, an event is queued before the first launch and after each launch group),
// and the observer's stamp kernel and one event end the call (exec_observer.h; the per-call sets
// alternate between calls, each with its graph slot). After the launch, the earlier calls that
// are complete are reported while the device runs this one.
// same: the host's compute_same (ABI 2.9): the graph is the one the last call with this node array
// had, unchanged, so the saved launch list that call used is taken without comparing the nodes.
int run_graph(Backend *b, const rf_graph *g, bool same, char *err, size_t len) {
    if (!b || !g || (g->n_nodes > 0 && !g->nodes)) return fail(err, len, RF_ERR_INVALID, "hip backend: compute needs ctx and a graph");
    const double t0 = b->stats.on ? now_us() : 0;
    std::string e;
    if (!make_current(*b, e)) {
        b->observer.skip_call(); // counted all the same: the observer numbers every call
        return fail(err, len, RF_ERR_DEVICE, e);
    }
    if (b->stats.on) {
        collect_gpu_time(*b);
        if (b->stats.last_compute_end >= 0) b->stats.gap_us += t0 - b->stats.last_compute_end;
        hipEventRecord(b->stats.ev[0], b->stream);
    }
    auto label = [&](int i) { return g->nodes[i]->label ? std::string(g->nodes[i]->label) : "node " + std::to_string(i); };
    // Launches are collected and submitted at the end (directly, or as a replayed graph).
    b->queue.begin();
    b->q8 = {};
    b->fq = {};
    const bool observed = b->observer.on();
    b->queue.set_slot(observed ? b->observer.begin_call(b->stream, b->queue, *g) : 0);
    // Every return below: a failed call reports nothing.
    struct EndCall {
        Backend &b; bool on;
        void done(bool ok) {
            if (on) b.observer.end_call(ok);
            on = false;
        }
        ~EndCall() { done(false); }
    } end_call{*b, observed};
    // The same graph as a recent call: its launches again, unit by unit when observed (walk_cache.h).
    const bool reuse = b->reuse_walks && !b->sync_each_node;
    const double tw = b->stats.on ? now_us() : 0;
    const WalkCache::Entry *saved = reuse && same ? b->walk_cache.lookup_same(*g, b->scratch_gen) : nullptr;
    if (saved) ++b->stats.same_calls;
    if (reuse && !saved && (saved = b->walk_cache.lookup(*g, b->scratch_gen))) b->walk_cache.remember_nodes(saved, *g);
    if (b->stats.on) b->stats.lookup_us += now_us() - tw;
    const uint64_t gen0 = b->scratch_gen;
    uint64_t tag = 0;       // the list's name for the launch queue (unobserved calls)
    bool submitted = false; // the slot's graph replayed as it is: nothing to queue or flush
    if (saved && !observed) {
        if (int r = b->queue.replay_tagged(b->stream, saved->tag, submitted, e)) return fail(err, len, r, e);
        if (!submitted) b->queue.repeat(saved->launches);
        tag = saved->tag;
    } else if (saved) {
        size_t k = 0;
        for (const WalkCache::Unit &u : saved->units) {
            for (; k < u.end; ++k) b->queue.add(saved->launches[k]);
            b->observer.unit(b->queue, *g, u.first, u.used, u.rule);
        }
    }
    if (saved) ++b->stats.reused_walks;
    struct Recording { // every return below stops it
        LaunchQueue &q; bool on;
        ~Recording() { if (on) q.record(nullptr); }
    } recording{b->queue, reuse && !saved};
    if (recording.on) {
        b->walk_launches.clear();
        b->walk_units.clear();
        b->queue.record(&b->walk_launches);
    }
    for (int i = 0, used = 1; !saved && i < g->n_nodes; i += used) {
        const rf_node *n = g->nodes[i];
        used = 1;
        const std::string why = unsupported_reason(*n);
        if (!why.empty()) return fail(err, len, RF_ERR_UNSUPPORTED, label(i) + ": " + why);
        // Fusions are the packs' (the backend has none of its own).
        used = b->fuse && !b->kernels.fusions.empty() ? pack_claim_at(*b, *g, i, e) : 0;
        if (used < 0) return fail(err, len, used == -2 ? RF_ERR_OUT_OF_MEMORY : RF_ERR_INVALID, label(i) + ": " + e);
        if (used == 0) {
            if (int r = run_node(*b, *n, e)) return fail(err, len, r, label(i) + ": " + e);
            used = 1;
        }
        if (recording.on) b->walk_units.push_back({i, used, (uint32_t)b->walk_launches.size(), b->rule});
        if (observed) b->observer.unit(b->queue, *g, i, used, b->rule);
        // sync_each_node: wait after every node so a fault names the node that caused it.
        if (b->sync_each_node) {
            if (int r = b->queue.flush(b->stream, e)) return fail(err, len, r, label(i) + ": " + e);
            b->queue.begin();
            if (hipError_t r = hipStreamSynchronize(b->stream))
                return fail(err, len, RF_ERR_DEVICE, label(i) + ": " + gpu_error("kernel execution", r));
        }
    }
    if (recording.on) {
        b->queue.record(nullptr);
        recording.on = false;
        // A reallocated scratch buffer flushed part of the list mid-walk: nothing to reuse.
        if (b->scratch_gen == gen0) {
            const uint64_t t = b->walk_cache.store(*g, gen0, b->walk_launches, b->walk_units);
            if (!observed) tag = t; // an observed list also holds its events or stamp kernels
        } else {
            b->walk_cache.clear();
        }
    }
    if (b->stats.on) b->stats.walk_us += now_us() - tw;
    if (observed) b->observer.close_call(b->queue); // the end of the call (timestamps: its stamp kernel)
    if (!submitted)
        if (int r = b->queue.flush(b->stream, e, tag)) return fail(err, len, r, e);
    end_call.done(true); // reports earlier calls now, while the device runs this one
    if (b->stats.on) {
        hipEventRecord(b->stats.ev[1], b->stream);
        b->stats.ev_pending = true;
        ++b->stats.computes;
        b->stats.nodes += (uint64_t)g->n_nodes;
        b->stats.last_compute_end = now_us();
        b->stats.compute_host_us += b->stats.last_compute_end - t0;
    }
    return RF_OK;
}

int compute(void *ctx, const rf_graph *g, char *err, size_t len) { return run_graph(static_cast<Backend *>(ctx), g, false, err, len); }
int compute_same(void *ctx, const rf_graph *g, char *err, size_t len) {
    auto *b = static_cast<Backend *>(ctx);
    return run_graph(b, g, b && b->trust_same, err, len);
}

int set_observer(void *ctx, const rf_exec_observer *observer, char *err, size_t len) {
    auto *b = static_cast<Backend *>(ctx);
    if (!b) return fail(err, len, RF_ERR_INVALID, "hip backend: set_observer needs ctx");
    std::string e;
    if (!make_current(*b, e)) return fail(err, len, RF_ERR_DEVICE, e);
    const int st = b->observer.set(b->stream, b->queue, observer, e);
    return st == RF_OK ? st : fail(err, len, st, e);
}

int synchronize(void *ctx, char *err, size_t len) {
    auto *b = static_cast<Backend *>(ctx);
    std::string e;
    if (!make_current(*b, e)) return fail(err, len, RF_ERR_DEVICE, e);
    const double t0 = b->stats.on ? now_us() : 0;
    if (hipError_t r = hipStreamSynchronize(b->stream)) return fail(err, len, RF_ERR_DEVICE, gpu_error("kernel execution", r));
    if (b->stats.on) b->stats.sync_us += now_us() - t0;
    // The step is complete; its timing events are read by the next compute(), after its launch
    // (exec_observer.h): reading them here would delay that launch.
    stream_idle(*b);
    return RF_OK;
}

int event_create(void *ctx, void **ev) {
    std::string e;
    if (!make_current(*static_cast<Backend *>(ctx), e)) return RF_ERR_DEVICE;
    hipEvent_t h = nullptr;
    if (hipEventCreate(&h)) return RF_ERR_DEVICE;
    *ev = h;
    return RF_OK;
}
int event_record(void *ctx, void *ev) {
    auto *b = static_cast<Backend *>(ctx);
    std::string e;
    if (!make_current(*b, e)) return RF_ERR_DEVICE;
    return hipEventRecord(static_cast<hipEvent_t>(ev), b->stream) ? RF_ERR_DEVICE : RF_OK;
}
int event_elapsed_ms(void *ctx, void *start, void *end, float *ms) {
    std::string e;
    if (!make_current(*static_cast<Backend *>(ctx), e)) return RF_ERR_DEVICE;
    if (hipEventSynchronize(static_cast<hipEvent_t>(end))) return RF_ERR_DEVICE;
    return hipEventElapsedTime(ms, static_cast<hipEvent_t>(start), static_cast<hipEvent_t>(end)) ? RF_ERR_DEVICE : RF_OK;
}
void event_destroy(void *ctx, void *ev) {
    std::string e;
    if (ev && make_current(*static_cast<Backend *>(ctx), e)) hipEventDestroy(static_cast<hipEvent_t>(ev));
}

const rf_backend_vtable kVtable = {
    /* .struct_size      = */ sizeof(rf_backend_vtable),
    /* .init             = */ init,
    /* .shutdown         = */ shutdown,
    /* .device_info      = */ device_info,
    /* .buffer_alloc     = */ v_buffer_alloc,
    /* .buffer_free      = */ v_buffer_free,
    /* .upload           = */ v_upload,
    /* .download         = */ v_download,
    /* .supports_op      = */ supports_op,
    /* .compute          = */ compute,
    /* .synchronize      = */ synchronize,
    /* .event_create     = */ event_create,
    /* .event_record     = */ event_record,
    /* .event_elapsed_ms = */ event_elapsed_ms,
    /* .event_destroy    = */ event_destroy,
    /* .buffer_from_host = */ nullptr,
    /* .retired_compute_timed  = */ nullptr,
    /* .retired_compute_events = */ nullptr,
    /* .option_keys      = */ option_keys,
    /* .flags            = */ backend_flags,
    /* .list_devices     = */ list_devices,
    /* .set_observer     = */ set_observer,
    /* .device_memory    = */ device_memory,
    /* .host_pin         = */ v_host_pin,
    /* .host_unpin       = */ v_host_unpin,
    /* .compute_same     = */ compute_same,
    /* .option_descs     = */ option_descs,
};

const rf_plugin_info kInfo = {RF_ABI_MAJOR, RF_ABI_MINOR, RF_PLUGIN_BACKEND, "hip", "0.1.0", &kVtable};

} // namespace
} // namespace rf_hip

extern "C" RF_PLUGIN_EXPORT const rf_plugin_info *rocmforge_plugin_entry(void) { return &rf_hip::kInfo; }
