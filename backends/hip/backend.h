// State of one HIP backend instance (one device, one stream) shared by the plugin's files.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "exec_observer.h"
#include "gpu_runtime.h"
#include "kernel_pack.h"
#include "launch_queue.h"
#include "options.h"
#include "walk_cache.h"
#include "rocmforge/abi.h"
#include "rocmforge/pack_abi.h"

namespace rf_hip {

struct Backend {
    int ordinal = 0;
    hipDevice_t device = 0;
    hipStream_t stream = nullptr;
    std::string name, arch, device_arch, details;
    uint64_t total_memory = 0;
    int multiprocessors = 0;
    KernelModule kernels;
    rf_pack_device pack_device{}; // what pack fusions' claims see (arch points into `arch`)
    Options options;             // this instance's backend options (options.h), as init read them
    rf_pack_options pack_options{}; // the packs' part of them (pack_device.options)
    // The kernel-table row (ops.cpp) or pack fusion that ran the node just walked: what an
    // observer is told chose the unit's kernels (rf_exec_observer.chose).
    const char *rule = "";
    // The options below as init applies them (plugin.cpp apply_options); the names in parentheses
    // are the option keys.
    bool sync_each_node = false; // (sync_each_node) debugging faults
    bool fuse = true;            // the packs' fusions (pack_fusion.h; fuse, off with sync_each_node)
    // Matmuls with 2..mvq_max_cols activation columns run on the dp4a column kernels
    // (rf_mvqn_*, two weight rows per warp); wider ones on the tile kernels (mvq_max_cols).
    int64_t mvq_max_cols = 16;
    // Decode matmuls pull their rows into L2 before rf_kernel_start: 1 every one, 0 none, -1 the
    // backend's one-column matmuls whose weight matrix has at most prefetch_max_bytes (ops.cpp;
    // prefetch on / off / auto). All on was slower on Llama-2-7B (docs/PERFORMANCE.md).
    int prefetch_weights = -1;
    uint64_t prefetch_max_bytes = 8ull << 20; // ... and that limit (prefetch_max_mb, for the packs' launches too)
    bool attention_stream = true; // decode attention: rf_attention_stream_* (attention_stream), else rf_attention_dec*
    // Streaming decode attention's grid target in blocks per SM (attention_blocks_per_sm).
    int att_blocks_per_sm = 8;
    // Contexts up to this many positions take the wide one-chunk kernels (attention_wide_max; 0: never).
    int64_t att_wide_max = 512;
    // ... on 4 warps (_w4) where the launch has at least this many blocks (KV heads x tokens); 0:
    // never. Twice the multiprocessors + 1 unless attention_wide4_blocks sets it.
    int64_t att_wide4_blocks = 0;
    // ... on 8 warps (_w8, groups of up to 4 heads) from this many blocks, below att_wide4_blocks; 0:
    // never (the multiprocessors + 1 unless attention_wide8_blocks sets it).
    int64_t att_wide8_blocks = 0;
    // F16-weight prefill: rf_mm_h16_* (staged copies) with the token tile chosen per shape;
    // 0: rf_mm_mma_f16 instead, 64|128: that tile (h16_tokens).
    int h16_tokens = -1;
    int h16_splits = 0; // K split of rf_mm_h16_* (0: chosen; 1|2|4 forces it: h16_splits)
    // F16 prefill of 65+ tokens on rf_mm_h16w_* (wgmma) where the kernels have it (sm_90a; h16_wgmma).
    bool h16_wgmma = true;
    // Quantized prefill from this many tokens on rf_mm_q16w_* (weights dequantized to f16 in shared
    // memory, wgmma) where the kernels have it; 0: off (q16w_min_tokens).
    int q16w_min = 128;
    int q16w_kquants = -1;     // ... also for Q4_K / Q5_K / Q6_K: 1 on, 0 off, -1 where the 256-token tiles are chosen
    int q16w_tokens = 0;       // their token tile: 0 chosen per shape, 128 | 256 forces it (q16w_tokens)
    bool attention_mma = true; // prefill attention on the tensor cores (attention_mma)
    bool f16_prefill_acts = true; // tensor-core prefill reads f16 activation rows, else f32 (f16_prefill_acts)
    LaunchQueue queue;           // launches of the compute() in progress (graph replay)
    // The launch lists of recent calls by graph, queued again for an equal one (walk_cache.h);
    // reuse_walks false: every call walks its graph.
    WalkCache walk_cache;
    bool reuse_walks = true;
    // compute_same (ABI 2.9) takes the launch list kept for the node array without comparing the
    // graph (trust_same false: compared as compute() compares).
    bool trust_same = true;
    std::vector<LaunchRec> walk_launches; // what the walk in progress adds (LaunchQueue::record)
    std::vector<WalkCache::Unit> walk_units;
    ExecObserver observer;       // set_observer (ABI 2.1): what compute() ran, for a profiler
    // Kernels whose dynamic shared-memory limit was raised (launch() with smem > 48 KB).
    std::vector<std::pair<hipFunction_t, unsigned>> smem_limits;
    // Device scratch owned by the plugin: q8_1 activations of M=1 matmuls, split-attention
    // partials, quantized-then-dequantized f32 activations of the other quantized matmuls.
    // Grown (never shrunk) by ensure_scratch(); the attention counters part is zeroed.
    struct Scratch { void *ptr = nullptr; uint64_t size = 0; };
    Scratch act_scratch, att_scratch, fq_scratch;
    Scratch moe_scratch; // MATMUL_ID prefill: columns grouped by expert (moe_grouped.cpp)
    Scratch lent_scratch; // lent to a pack claim's launches (rf_fusion_launch.lent_bytes, ABI 2.7)
    uint64_t scratch_gen = 0; // bumped by every (re)allocation of a scratch buffer (walk_cache.h)
    // Pinned host memory that small uploads are copied into before their device copy is queued
    // (memory.cpp upload): [0, used) may still be read by queued copies until the stream is
    // next idle. staged_uploads false: every upload blocking.
    struct Staging { uint8_t *ptr = nullptr; uint64_t size = 0, used = 0; bool on = true; };
    Staging staging;
    // An activation quantized in this compute() the way the CPU backend quantizes it
    // (kernels/quantize_act.hip): reused by the next matmuls that read the same tensor with the
    // same block size (Q, K, V / gate, up) until a node writes over its source bytes.
    struct ActCopy {
        const void *src = nullptr; // null: nothing cached
        uint64_t src_bytes = 0;    // extent of the source tensor
        int64_t k = 0, rows = 0;
        int block = 0;             // 32 or 256 (fq: 0 = f16 rounding only)
        void *where = nullptr;     // device address of the copy (q8: act_scratch or att_scratch)
        int elem = 4;              // fq: bytes per element (4: f32 rows, 2: f16 rows)
    };
    ActCopy q8; // q8_1 columns in act_scratch (dp4a kernels)
    ActCopy fq; // f32 or f16 rows in fq_scratch (tensor-core, tile and small-M kernels)
    struct Stats { // option stats: printed at shutdown
        bool on = false;
        uint64_t computes = 0, nodes = 0, uploads = 0, downloads = 0, pack_claims = 0, reused_walks = 0, same_calls = 0;
        double compute_host_us = 0, walk_us = 0, lookup_us = 0, gap_us = 0, sync_us = 0, upload_us = 0, download_us = 0, gpu_us = 0;
        double last_compute_end = -1; // host clock (us) when the previous compute() returned
        hipEvent_t ev[2] = {nullptr, nullptr};
        bool ev_pending = false;
    } stats;
};

// Grows a scratch buffer to at least `bytes` (waits for queued work before freeing the old one).
bool ensure_scratch(Backend &b, Backend::Scratch &s, uint64_t bytes, bool zero, std::string &err);

// Makes the backend's device current on the calling thread (the driver binds contexts per thread).
bool make_current(Backend &b, std::string &err);

// Writes msg into a caller buffer (always NUL-terminated), returns code.
int fail(char *err, size_t len, int code, const std::string &msg);

} // namespace rf_hip
