#include "options.h"

#include <rapidjson/document.h>

#include <climits>
#include <cstring>

namespace rf_hip {

namespace {

// One option: what the host is told (rf_option_desc) and the Options member it sets. `values`:
// for an integer accepted only at some points of min..max, those points ("0|1|2|4").
struct Field {
    rf_option_desc desc;
    bool Options::*flag = nullptr;
    int Options::*number = nullptr;
    std::string Options::*text = nullptr;
    std::vector<std::string> Options::*list = nullptr;
    const char *values = nullptr;
};

constexpr long long kNoMin = 0, kNoMax = 0;

Field boolean(const char *key, bool Options::*m, const char *def, const char *help) {
    Field f{{key, RF_OPTION_BOOL, def, kNoMin, kNoMax, nullptr, help}};
    f.flag = m;
    return f;
}
Field integer(const char *key, int Options::*m, const char *def, long long lo, long long hi, const char *help, const char *values = nullptr) {
    Field f{{key, RF_OPTION_INT, def, lo, hi, nullptr, help}};
    f.number = m;
    f.values = values;
    return f;
}
Field string(const char *key, std::string Options::*m, const char *help) {
    Field f{{key, RF_OPTION_STRING, "", kNoMin, kNoMax, nullptr, help}};
    f.text = m;
    return f;
}
Field choice(const char *key, std::string Options::*m, const char *def, const char *choices, const char *help) {
    Field f{{key, RF_OPTION_ENUM, def, kNoMin, kNoMax, choices, help}};
    f.text = m;
    return f;
}
Field strings(const char *key, std::vector<std::string> Options::*m, const char *help) {
    Field f{{key, RF_OPTION_STRING_LIST, "", kNoMin, kNoMax, nullptr, help}};
    f.list = m;
    return f;
}

// The table: docs/OPTIONS.md lists the same (key, default, range, effect).
const std::vector<Field> &fields() {
    using O = Options;
    static const std::vector<Field> table = {
        integer("device", &O::device, "0", 0, INT_MAX, "index of the GPU to use (rocmforge info lists them)"),
        strings("kernel_pack_dirs", &O::kernel_pack_dirs, "folders searched for kernel packs (default: next to the plugin)"),
        strings("packs", &O::packs, "kernel pack .so files loaded in addition, in order"),
        string("arch_override", &O::arch_override, "load the packs of this arch instead of the device's"),
        choice("jit", &O::jit, "auto", "auto|off|force", "compile the embedded kernels: auto (no pack for the arch), off, force"),
        string("cache_dir", &O::cache_dir, "JIT cache folder (default ROCMFORGE_CACHE_DIR, else the user cache)"),
        boolean("sync_each_node", &O::sync_each_node, "false", "debug: wait after every node so a fault names it (no fusion, no graphs)"),
        boolean("graphs", &O::graphs, "true", "replay repeated launch lists as device graphs"),
        boolean("pdl", &O::pdl, "true", "programmatic edges between the graph's kernels (NVIDIA sm_90+)"),
        boolean("beside", &O::beside, "true", "pack launches that allow it run beside the launch before them in graphs"),
        boolean("fuse", &O::fuse, "true", "the kernel packs' fusions"),
        boolean("reuse_walks", &O::reuse_walks, "true", "an equal graph reuses the launch list of an earlier call"),
        boolean("trust_same", &O::trust_same, "true", "compute_same reuses the kept launch list without comparing the graph"),
        boolean("staged_uploads", &O::staged_uploads, "true", "small uploads go through pinned staging and are not waited for"),
        boolean("host_pin", &O::host_pin, "true", "pin host buffers for downloads (false: the core uses pageable memory)"),
        boolean("stats", &O::stats, "false", "count calls, launches and times; print them at shutdown"),
        choice("observer_events", &O::observer_events, "auto", "auto|on|off",
               "profiler timing: auto (kernel timestamps where the kernels have them), on (events), off (timestamps)"),
        choice("prefetch", &O::prefetch, "auto", "auto|on|off",
               "decode matmul weights into L2 before the wait: auto (one-column matmuls of small matrices; decode "
               "MATMUL_ID when its routed experts are that small), on (all), off"),
        integer("prefetch_max_mb", &O::prefetch_max_mb, "8", 1, 65536, "prefetch=auto: matrices (or routed experts' rows) up to this many MiB"),
        integer("prefetch_head_mb", &O::prefetch_head_mb, "4", 0, 65536,
                "pack launches of several columns prefetch this many MiB of the weights' head (0: none)"),
        integer("mvq_max_cols", &O::mvq_max_cols, "16", 1, 65535, "matmuls of 2..N activation columns on the dp4a column kernels (1: none)"),
        integer("mmq_min_cols", &O::mmq_min_cols, "5", 1, 65, "matmuls of this many to 64 columns on the integer tensor-core tiles (65: none)"),
        integer("mmq_ksplit", &O::mmq_ksplit, "0", 0, 4, "K split of those tiles: 0 chosen per shape, 1, 2 or 4", "0|1|2|4"),
        boolean("mmq_prefill", &O::mmq_prefill, "true", "quantized prefill on the integer tensor cores (false: the f16 ones)"),
        integer("mmqp_cols", &O::mmqp_cols, "0", 0, 128, "tile width of the integer prefill kernels: 0 chosen, 64 or 128", "0|64|128"),
        integer("mmqp_ksplit", &O::mmqp_ksplit, "0", 0, 2, "K split of the 64-column prefill tiles: 0 chosen, 1 or 2"),
        integer("h16_tokens", &O::h16_tokens, "-1", -1, 128, "F16 prefill token tile: -1 chosen, 0 rf_mm_mma_f16, 64 or 128", "-1|0|64|128"),
        integer("h16_splits", &O::h16_splits, "0", 0, 4, "K split of the F16 and Q16W prefill tiles: 0 chosen, 1, 2 or 4", "0|1|2|4"),
        boolean("h16_wgmma", &O::h16_wgmma, "true", "F16 prefill of 65+ tokens on the wgmma tiles (sm_90a)"),
        integer("q16w_min_tokens", &O::q16w_min_tokens, "128", 0, INT_MAX,
                "quantized prefill on rf_mm_q16w_* (sm_90a) from this many tokens (0: never)"),
        choice("q16w_kquants", &O::q16w_kquants, "auto", "auto|on|off",
               "rf_mm_q16w_* also for Q4_K, Q5_K and Q6_K: auto (where the 256-token tiles are chosen), on (every M), off"),
        integer("q16w_tokens", &O::q16w_tokens, "0", 0, 256, "token tile of rf_mm_q16w_*: 0 chosen per shape, 128 or 256", "0|128|256"),
        boolean("f16_prefill_acts", &O::f16_prefill_acts, "true", "tensor-core prefill reads f16 activation rows (false: f32)"),
        integer("moe_group_min", &O::moe_group_min, "64", 0, INT_MAX, "MATMUL_ID prefill grouped by expert from this many columns (0: never); the dp4a routed-column kernels take up to 64 first"),
        boolean("attention_stream", &O::attention_stream, "true", "decode attention on the streaming kernels (false: rf_attention_dec*)"),
        boolean("attention_mma", &O::attention_mma, "true", "prefill attention on the tensor cores"),
        integer("attention_blocks_per_sm", &O::attention_blocks_per_sm, "8", 1, 64, "streaming decode attention's grid target"),
        integer("attention_wide_max", &O::attention_wide_max, "512", 0, 1024, "contexts up to this many positions in one chunk (0: never)"),
        integer("attention_wide8_blocks", &O::attention_wide8_blocks, "-1", -1, INT_MAX,
                "the 8-warp one-chunk form from this many blocks (-1: SMs + 1, 0: never)"),
        integer("attention_wide4_blocks", &O::attention_wide4_blocks, "-1", -1, INT_MAX,
                "the 4-warp one-chunk form from this many blocks (-1: twice the SMs + 1, 0: never)"),
        boolean("norm_prefetch", &O::norm_prefetch, "true", "the fused norm pulls its add's operands into L2 before the wait"),
        integer("norm_pieces", &O::norm_pieces, "0", 0, 4, "the fused norm's float4 pieces per thread: 0 chosen per row, 1, 2 or 4", "0|1|2|4"),
        integer("norm_cluster_blocks", &O::norm_cluster_blocks, "4", 1, 8,
                "sm_90: the most blocks of a cluster sharing a fused norm's row (1: no clusters)", "1|2|4|8"),
    };
    return table;
}

bool listed(const char *values, long long v) {
    const std::string want = std::to_string(v);
    for (const char *p = values; *p;) {
        const char *e = std::strchr(p, '|');
        const size_t n = e ? size_t(e - p) : std::strlen(p);
        if (want.size() == n && want.compare(0, n, p, n) == 0) return true;
        p += n + (e ? 1 : 0);
    }
    return false;
}

std::string accepted(const Field &f) {
    const rf_option_desc &d = f.desc;
    switch (d.type) {
    case RF_OPTION_BOOL: return "true or false";
    case RF_OPTION_INT:
        if (f.values) return "one of the integers " + std::string(f.values);
        return "an integer in " + std::to_string(d.min) + ".." + std::to_string(d.max);
    case RF_OPTION_ENUM: return "one of the strings " + std::string(d.choices);
    case RF_OPTION_STRING: return "a string";
    default: return "an array of strings";
    }
}

// Sets the member from v, or says what is wrong.
bool set(const Field &f, const rapidjson::Value &v, Options &o, std::string &err) {
    const rf_option_desc &d = f.desc;
    bool ok = false;
    switch (d.type) {
    case RF_OPTION_BOOL:
        if ((ok = v.IsBool())) o.*f.flag = v.GetBool();
        break;
    case RF_OPTION_INT:
        if ((ok = v.IsInt64() && v.GetInt64() >= d.min && v.GetInt64() <= d.max && (!f.values || listed(f.values, v.GetInt64()))))
            o.*f.number = (int)v.GetInt64();
        break;
    case RF_OPTION_STRING:
        if ((ok = v.IsString())) o.*f.text = v.GetString();
        break;
    case RF_OPTION_ENUM:
        if ((ok = v.IsString())) {
            const std::string s = v.GetString();
            ok = !s.empty() && s.find('|') == std::string::npos && ("|" + std::string(d.choices) + "|").find("|" + s + "|") != std::string::npos;
            if (ok) o.*f.text = s;
        }
        break;
    case RF_OPTION_STRING_LIST:
        if (v.IsArray()) {
            ok = true;
            for (const auto &e : v.GetArray()) ok = ok && e.IsString();
        }
        if (ok) {
            (o.*f.list).clear();
            for (const auto &e : v.GetArray()) (o.*f.list).emplace_back(e.GetString());
        }
        break;
    }
    if (!ok) err = "hip backend option '" + std::string(d.key) + "': expected " + accepted(f);
    return ok;
}

} // namespace

bool parse_options(const char *json, Options &o, std::string &err) {
    rapidjson::Document doc;
    doc.Parse(json && *json ? json : "{}");
    if (doc.HasParseError() || !doc.IsObject()) { err = "hip backend config: not a JSON object"; return false; }
    for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
        const char *key = it->name.GetString();
        for (const Field &f : fields())
            if (std::strcmp(f.desc.key, key) == 0 && !set(f, it->value, o, err)) return false;
        // other keys belong to the host (e.g. n_threads) and are ignored
    }
    return true;
}

const char *const *option_keys() {
    static const std::vector<const char *> keys = [] {
        std::vector<const char *> k;
        for (const Field &f : fields()) k.push_back(f.desc.key);
        k.push_back(nullptr);
        return k;
    }();
    return keys.data();
}

const rf_option_desc *option_descs(int32_t *count) {
    static const std::vector<rf_option_desc> descs = [] {
        std::vector<rf_option_desc> d;
        for (const Field &f : fields()) d.push_back(f.desc);
        return d;
    }();
    if (count) *count = (int32_t)descs.size();
    return descs.data();
}

uint32_t backend_flags() { return RF_BACKEND_OPTIONAL; }

} // namespace rf_hip
