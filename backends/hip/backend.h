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
#include "walk_cache.h"
#include "rocmforge/abi.h"

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
    bool sync_each_node = false; // ROCMFORGE_HIP_SYNC=1 (debugging faults)
    bool fuse = true;            // the packs' fusions (pack_fusion.h; ROCMFORGE_HIP_FUSE=0: off)
    // The packs' matmul fusions (projections, gate/up + SwiGLU, matmul + rope, the tensor-core
    // runs: pack_matmul_form then names no form and pack_matmul_tiles no tiles):
    // ROCMFORGE_HIP_FUSE=norm turns them off, the packs' other fusions (the fused norm among them)
    // stay (A/B).
    bool fuse_beyond_norm = true;
    bool cpu_like_activations = true; // int8-quantized activations as the CPU's (ROCMFORGE_HIP_ACT=f16: off)
    // Matmuls with 2..mvq_max_cols activation columns run on the dp4a column kernels
    // (rf_mvqn_*, R = mvq_rows_per_warp weight rows per warp); wider ones on the tile kernels.
    // ROCMFORGE_HIP_MVQ_COLS / ROCMFORGE_HIP_MVQ_ROWS override them (A/B).
    int64_t mvq_max_cols = 16;
    int mvq_rows_per_warp = 2;
    // Decode matmuls pull their rows into L2 before rf_kernel_start: 1 every one, 0 none
    // (ROCMFORGE_HIP_PREFETCH=1 / 0), -1 (default) the backend's one-column matmuls whose weight
    // matrix has at most prefetch_max_bytes (ops.cpp). All on: TinyLlama tg128 +2.4% but Llama-2-7B
    // -3.6% (H200; H100 +5% / -3..-13%), interleaved A/Bs.
    int prefetch_weights = -1;
    // ... and that limit, bytes (ROCMFORGE_HIP_PREFETCH_MB=N sets it, for the packs' launches too,
    // A/B: 10 and 40 were slower on 7B).
    uint64_t prefetch_max_bytes = 8ull << 20;
    // ROCMFORGE_HIP_DROP=name,...: launches of these base kernels (by kernel name) and pack fusions
    // (by fusion name, or the kernel a claim's launch names) are not queued. A measuring tool only,
    // for what those launches cost in a step (docs/PROFILING_GUIDE.md): the results are wrong while
    // it is set.
    std::vector<std::string> drop_launches;
    bool drops(const char *name) const {
        for (const auto &d : drop_launches)
            if (d == name) return true;
        return false;
    }
    bool attention_stream = true;
    // Streaming decode attention's grid target in blocks per SM (ROCMFORGE_HIP_ATT_BLOCKS, A/B): 8 since
    // the packed f16 kernels fit 8 per SM (H100 7B tg64 @ d8192 222-224 vs 216-219 with 4; d512,
    // d2048 and 2..16 sequences unchanged within the spread).
    int att_blocks_per_sm = 8;
    // Contexts up to this many positions take the wide one-chunk kernels (ROCMFORGE_HIP_ATT_WIDE=N; 0: never, A/B).
    int64_t att_wide_max = 512;
    // ... on 4 warps (_w4) where the launch has at least this many blocks (KV heads x tokens); 0:
    // never. Set to twice the multiprocessors + 1 at load (ROCMFORGE_HIP_ATT_W4=N, A/B).
    int64_t att_wide4_blocks = 0;
    // ... on 8 warps (_w8, groups of up to 4 heads) from this many blocks, below att_wide4_blocks; 0:
    // never (set to the multiprocessors + 1 at load, ROCMFORGE_HIP_ATT_W8=N).
    int64_t att_wide8_blocks = 0;
    // F16-weight prefill: rf_mm_h16_* (staged copies) with the token tile chosen per shape;
    // ROCMFORGE_HIP_H16=0: rf_mm_mma_f16 instead, =64|128: that tile (A/B).
    int h16_tokens = -1;
    int h16_splits = 0; // K split of rf_mm_h16_* (0: chosen; ROCMFORGE_HIP_H16_KS=1|2|4 forces it, A/B)
    // F16 prefill of 128+ tokens on rf_mm_h16w_* (wgmma) where the kernels have it (sm_90a);
    // ROCMFORGE_HIP_H16_WGMMA=0: rf_mm_h16_* (A/B).
    bool h16_wgmma = true;
    // Quantized prefill from this many tokens on rf_mm_q16w_* (weights dequantized to f16 in shared
    // memory, wgmma) where the kernels have it; ROCMFORGE_HIP_Q16W=N sets it, 0 turns it off (A/B).
    int q16w_min = 128;
    bool q16w_kquants = false; // ... also for Q4_K / Q5_K / Q6_K (ROCMFORGE_HIP_Q16W_KQUANTS=1, A/B)
    bool attention_mma = true; // prefill attention on the tensor cores (ROCMFORGE_HIP_ATT_MMA=0: off, A/B)
    bool f16_prefill_acts = true; // tensor-core prefill reads f16 activation rows (ROCMFORGE_HIP_ACT16=0: f32, A/B) // decode attention: rf_attention_stream_* (ROCMFORGE_HIP_ATT_STREAM=0: rf_attention_dec*)
    LaunchQueue queue;           // launches of the compute() in progress (graph replay)
    // The launch lists of recent calls by graph, queued again for an equal one (walk_cache.h);
    // ROCMFORGE_HIP_REUSE=0: every call walks its graph (A/B).
    WalkCache walk_cache;
    bool reuse_walks = true;
    // compute_same (ABI 2.9) takes the launch list kept for the node array without comparing the
    // graph (ROCMFORGE_HIP_SAME=0: compared as compute() compares, A/B).
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
    // next idle. ROCMFORGE_HIP_STAGED_UPLOADS=0: every upload blocking (A/B).
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
    struct Stats { // ROCMFORGE_HIP_STATS=1: printed at shutdown
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
