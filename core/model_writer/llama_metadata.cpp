// The llama-family hyperparameter keys and the size label, written the way llama.cpp's
// convert_hf_to_gguf.py writes them; shared by `mkmodel` and `import`.
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "rocmforge/gguf.h"
#include "rocmforge/model_writer.h"

namespace rf {

std::string size_label(int64_t n_params) {
    const char *suffix = "";
    double scaled = double(n_params);
    if (n_params > 1000000000000LL) { scaled /= 1e12; suffix = "T"; }
    else if (n_params > 1000000000LL) { scaled /= 1e9; suffix = "B"; }
    else if (n_params > 1000000LL) { scaled /= 1e6; suffix = "M"; }
    else { scaled /= 1e3; suffix = "K"; }
    const int int_digits = int(std::to_string(int64_t(std::llround(scaled))).size());
    const int decimals = std::max(2 - int_digits, 0);
    return fmt::format("{:.{}f}{}", scaled, decimals, suffix);
}

void set_llama_hparam_keys(gguf::Writer &w, const LlamaHparamKeys &k) {
    using gguf::Value;
    const std::string a = k.arch + ".";
    w.set(a + "block_count", Value::from_u32(uint32_t(k.n_layer)));
    w.set(a + "context_length", Value::from_u32(uint32_t(k.n_ctx)));
    w.set(a + "embedding_length", Value::from_u32(uint32_t(k.n_embd)));
    w.set(a + "feed_forward_length", Value::from_u32(uint32_t(k.n_ff)));
    w.set(a + "attention.head_count", Value::from_u32(uint32_t(k.n_head)));
    w.set(a + "attention.head_count_kv", Value::from_u32(uint32_t(k.n_head_kv)));
    w.set(a + "rope.freq_base", Value::from_f32(k.rope_base));
    w.set(a + "attention.layer_norm_rms_epsilon", Value::from_f32(k.rms_eps));
}

} // namespace rf
