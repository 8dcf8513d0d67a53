// The HIP backend's options: the keys of its backend_options (config, --backend-option hip.KEY=V),
// one table with their types, defaults and ranges (options.cpp), what the plugin tells the host
// before init (option_keys, option_descs: ABI 1.2 / 2.10), and their parse into Options. No GPU
// is needed for any of it (tests/hip/test_options.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "rocmforge/abi.h"

namespace rf_hip {

// Every option's value for one backend instance; the member initializers are the defaults the
// table in options.cpp states (the test checks that they agree).
struct Options {
    // Device and kernels.
    int device = 0;
    std::vector<std::string> kernel_pack_dirs, packs;
    std::string arch_override, jit = "auto", cache_dir;
    // Execution.
    bool sync_each_node = false; // wait after every node, no fusion, no graphs (a fault names its node)
    bool graphs = true;          // replay repeated launch lists as graphs
    bool pdl = true;             // programmatic edges between graph kernels (NVIDIA sm_90+)
    bool beside = true;          // pack launches that may run beside the one before them do so in graphs
    bool fuse = true;            // the packs' fusions
    bool reuse_walks = true;     // an equal graph takes the launch list of an earlier call
    bool trust_same = true;      // compute_same takes the list kept for the node array unchecked
    bool staged_uploads = true;  // small uploads through pinned staging, not waited for
    bool host_pin = true;        // host_pin registers host memory (false: refused)
    bool stats = false;          // per-call counters and times, printed at shutdown
    std::string observer_events = "auto"; // an observer's timing: auto, on (events), off (timestamps)
    // Matmuls.
    std::string prefetch = "auto"; // decode weights into L2 before the wait: auto (small matrices), on, off
    int prefetch_max_mb = 8;       // auto: one-column matmuls of matrices up to this many MiB
    int prefetch_head_mb = 4;      // the packs' launches of several columns: this many MiB of the head
    int mvq_max_cols = 16;         // 2..N activation columns on the dp4a column kernels
    int mmq_min_cols = 5;          // from this many columns on the integer tensor-core tiles
    int mmq_ksplit = 0;            // their K split: 0 chosen, 1, 2 or 4
    bool mmq_prefill = true;       // quantized prefill on the integer tensor cores (rf_mmqp_*)
    int mmqp_cols = 0;             // their tile width: 0 chosen, 64 or 128
    int mmqp_ksplit = 0;           // the 64-column tiles' K split: 0 chosen, 1 or 2
    int h16_tokens = -1;           // F16 prefill tile: -1 chosen, 0 rf_mm_mma_f16, 64 or 128
    int h16_splits = 0;            // their K split: 0 chosen, 1, 2 or 4
    bool h16_wgmma = true;         // F16 prefill of 128+ tokens on the wgmma tiles (sm_90a)
    int q16w_min_tokens = 128;     // quantized prefill on rf_mm_q16w_* from this many tokens; 0 never
    std::string q16w_kquants = "auto"; // ... also for Q4_K / Q5_K / Q6_K: auto (256-token tiles), on, off
    int q16w_tokens = 0;           // their token tile: 0 chosen, 128 or 256
    bool f16_prefill_acts = true;  // tensor-core prefill reads f16 activation rows
    int moe_group_min = 64;        // MATMUL_ID prefill grouped by expert from this many columns; 0 never
    // Attention.
    bool attention_stream = true;     // decode on rf_attention_stream_* (false: rf_attention_dec*)
    bool attention_mma = true;        // prefill on the tensor cores
    int attention_blocks_per_sm = 8;  // streaming decode's grid target
    int attention_wide_max = 512;     // contexts up to this many positions in one chunk; 0 never
    int attention_wide8_blocks = -1;  // the 8-warp one-chunk form from this many blocks; -1 SMs + 1, 0 never
    int attention_wide4_blocks = -1;  // the 4-warp form; -1 twice the SMs + 1, 0 never
    // The packs' fused norm (rf_pack_options).
    bool norm_prefetch = true;    // the add's operands into L2 before the wait
    int norm_pieces = 0;          // float4 pieces per thread: 0 chosen, 1, 2 or 4
    int norm_cluster_blocks = 4;  // sm_90: the most blocks of a cluster sharing a row (1 none, 2, 4, 8)

    bool operator==(const Options &) const = default;
};

// Reads the backend config (a JSON object) into `o`: every key of option_keys() checked (JSON
// type, range, choices); keys of other layers (the host's n_threads) are ignored. False with
// `err` naming the key and what it accepts.
bool parse_options(const char *json, Options &o, std::string &err);

// NULL-terminated; the keys parse_options reads.
const char *const *option_keys();
// Each key's type, default, range and meaning, in option_keys' order (*count entries).
const rf_option_desc *option_descs(int32_t *count);
// RF_BACKEND_OPTIONAL: a machine without a GPU or driver skips this backend.
uint32_t backend_flags();

} // namespace rf_hip
