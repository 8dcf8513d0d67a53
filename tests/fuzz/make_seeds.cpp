// Writes the GGUF seeds of tests/fuzz/corpus (tiny models and vocabularies the fuzzers start
// from; committed, so this only runs when they change):
//   rocmforge-fuzz-seeds tests/fuzz/corpus
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "rocmforge/error.h"
#include "rocmforge/gguf.h"
#include "rocmforge/types.h"

namespace {

using rf::gguf::Value;
using rf::gguf::Writer;

struct Shape {
    std::string arch = "llama";
    int64_t n_embd = 8, n_head = 2, n_head_kv = 1, n_ff = 16, n_vocab = 16, n_layer = 1;
    int matrix_type = RF_TYPE_F32;
    bool tied = false;
};

// Tensors filled with a fixed byte pattern: the fuzzer needs valid layout, not useful weights.
// f32 0x3c3c3c3c is about 0.0115; Q8_0 blocks get scale 0x3c3c (f16 ~1.06) and int8 60.
void add(Writer &w, const std::string &name, int type, std::vector<int64_t> ne) {
    w.add_tensor(name, type, ne, [type, ne](uint8_t *dst) {
        const int64_t rows = ne.size() > 1 ? ne[1] : 1;
        const size_t bytes = size_t(rf::row_size(type, ne[0]) * rows);
        std::fill(dst, dst + bytes, uint8_t(0x3c));
    });
}

Writer model(const Shape &s) {
    Writer w;
    const std::string &a = s.arch;
    w.set("general.architecture", Value::from_string(a));
    w.set("general.name", Value::from_string("fuzz-seed"));
    w.set(a + ".context_length", Value::from_u32(64));
    w.set(a + ".embedding_length", Value::from_u32(uint32_t(s.n_embd)));
    w.set(a + ".block_count", Value::from_u32(uint32_t(s.n_layer)));
    w.set(a + ".feed_forward_length", Value::from_u32(uint32_t(s.n_ff)));
    w.set(a + ".attention.head_count", Value::from_u32(uint32_t(s.n_head)));
    w.set(a + ".attention.head_count_kv", Value::from_u32(uint32_t(s.n_head_kv)));
    w.set(a + ".attention.layer_norm_rms_epsilon", Value::from_f32(1e-5f));
    w.set(a + ".rope.freq_base", Value::from_f32(10000.0f));
    const int64_t E = s.n_embd, KV = s.n_embd / s.n_head * s.n_head_kv, F = s.n_ff, M = s.matrix_type;
    add(w, "token_embd.weight", M, {E, s.n_vocab});
    add(w, "output_norm.weight", RF_TYPE_F32, {E});
    if (!s.tied) add(w, "output.weight", M, {E, s.n_vocab});
    for (int64_t l = 0; l < s.n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        add(w, p + "attn_norm.weight", RF_TYPE_F32, {E});
        add(w, p + "attn_q.weight", M, {E, E});
        add(w, p + "attn_k.weight", M, {E, KV});
        add(w, p + "attn_v.weight", M, {E, KV});
        add(w, p + "attn_output.weight", M, {E, E});
        if (a == "qwen2") {
            add(w, p + "attn_q.bias", RF_TYPE_F32, {E});
            add(w, p + "attn_k.bias", RF_TYPE_F32, {KV});
            add(w, p + "attn_v.bias", RF_TYPE_F32, {KV});
        }
        add(w, p + "ffn_norm.weight", RF_TYPE_F32, {E});
        add(w, p + "ffn_gate.weight", M, {E, F});
        add(w, p + "ffn_up.weight", M, {E, F});
        add(w, p + "ffn_down.weight", M, {F, E});
    }
    return w;
}

// Every metadata value type once, nested arrays and an alignment other than the default.
Writer all_value_types() {
    Writer w;
    w.set_alignment(64);
    w.set("t.u32", Value::from_u32(7));
    w.set("t.i32", Value::from_i32(-7));
    w.set("t.u64", Value::from_u64(1ull << 40));
    w.set("t.f32", Value::from_f32(0.5f));
    w.set("t.bool", Value::from_bool(true));
    w.set("t.str", Value::from_string("text \xe2\x96\x81"));
    w.set("t.strs", Value::from_strings({"a", "", "bc"}));
    w.set("t.i32s", Value::from_i32s({1, -2, 3}));
    Value nested;
    nested.type = rf::gguf::ValueType::ARRAY;
    nested.elem_type = rf::gguf::ValueType::ARRAY;
    nested.arr = {Value::from_f32s({1.0f}), Value::from_f32s({})};
    w.set("t.nested", nested);
    add(w, "q8", RF_TYPE_Q8_0, {32, 2});
    add(w, "iq2_xxs", RF_TYPE_IQ2_XXS, {256, 1}); // grid indices 0x3c, scale 3, signs
    add(w, "tq1_0", RF_TYPE_TQ1_0, {256, 1});
    add(w, "f16", RF_TYPE_F16, {3});
    return w;
}

// SentencePiece: <unk>, <s>, </s>, the 256 byte tokens, a few merged pieces with scores.
Writer spm_vocab() {
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
    std::vector<int32_t> types = {2, 3, 3};
    char buf[8];
    for (int b = 0; b < 256; ++b) {
        std::snprintf(buf, sizeof buf, "<0x%02X>", b);
        tokens.push_back(buf);
        types.push_back(6);
    }
    for (const char *p : {"\xe2\x96\x81", "a", "b", "\xe2\x96\x81" "a", "ab", "\xe2\x96\x81" "ab", "\xc3\xa9"}) {
        tokens.push_back(p);
        types.push_back(1);
    }
    std::vector<float> scores;
    for (size_t i = 0; i < tokens.size(); ++i) scores.push_back(-float(i));
    Writer w;
    w.set("tokenizer.ggml.model", Value::from_string("llama"));
    w.set("tokenizer.ggml.tokens", Value::from_strings(tokens));
    w.set("tokenizer.ggml.scores", Value::from_f32s(scores));
    w.set("tokenizer.ggml.token_type", Value::from_i32s(types));
    w.set("tokenizer.ggml.unknown_token_id", Value::from_u32(0));
    w.set("tokenizer.ggml.bos_token_id", Value::from_u32(1));
    w.set("tokenizer.ggml.eos_token_id", Value::from_u32(2));
    return w;
}

// Byte-level BPE: GPT-2's 256 byte stand-ins, merged tokens, one control token.
Writer bpe_vocab(const std::string &pre) {
    std::vector<std::string> tokens(256);
    int n = 0;
    for (int b = 0; b < 256; ++b) {
        const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
        const uint32_t c = printable ? uint32_t(b) : uint32_t(256 + n++);
        std::string s;
        if (c < 0x80) {
            s += char(c);
        } else {
            s += char(0xC0 | (c >> 6));
            s += char(0x80 | (c & 0x3F));
        }
        tokens[size_t(b)] = s;
    }
    for (const char *t : {"he", "ll", "hell", "hello", "\xc4\xa0h", "<|endoftext|>"}) tokens.push_back(t);
    std::vector<int32_t> types(tokens.size(), 1);
    types.back() = 3;
    Writer w;
    w.set("tokenizer.ggml.model", Value::from_string("gpt2"));
    w.set("tokenizer.ggml.pre", Value::from_string(pre));
    w.set("tokenizer.ggml.tokens", Value::from_strings(tokens));
    w.set("tokenizer.ggml.token_type", Value::from_i32s(types));
    w.set("tokenizer.ggml.merges", Value::from_strings({"h e", "l l", "he ll", "hell o", "\xc4\xa0 h"}));
    w.set("tokenizer.ggml.eos_token_id", Value::from_u32(uint32_t(tokens.size() - 1)));
    return w;
}

std::string slurp(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// fuzz_tokenizer_vocab input: flags, u16 text length, text, then the GGUF file.
void write_vocab_seed(const Writer &w, const std::string &path, uint8_t flags, const std::string &text) {
    const std::string tmp = path + ".gguf.tmp";
    w.write(tmp);
    const std::string gguf = slurp(tmp);
    std::remove(tmp.c_str());
    std::ofstream out(path, std::ios::binary);
    out.put(char(flags)).put(char(text.size() & 0xff)).put(char(text.size() >> 8));
    out << text << gguf;
}

} // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s CORPUS_DIR (tests/fuzz/corpus)\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    try {
        model(Shape{}).write(dir + "/gguf/llama_f32.gguf");
        Shape q8;
        q8.n_embd = 32;
        q8.n_head = 4;
        q8.n_ff = 32;
        q8.matrix_type = RF_TYPE_Q8_0;
        q8.tied = true;
        model(q8).write(dir + "/gguf/llama_q8_0_tied.gguf");
        Shape iq4;
        iq4.n_embd = 32;
        iq4.n_head = 4;
        iq4.n_ff = 32;
        iq4.matrix_type = RF_TYPE_IQ4_NL;
        model(iq4).write(dir + "/gguf/llama_iq4_nl.gguf");
        Shape qwen;
        qwen.arch = "qwen2";
        model(qwen).write(dir + "/gguf/qwen2_f32.gguf");
        all_value_types().write(dir + "/gguf/value_types.gguf");
        Writer().write(dir + "/gguf/empty.gguf");
        spm_vocab().write(dir + "/gguf/vocab_spm.gguf");

        const std::string text = "Hello world, h\xc3\xa9llo ab  ab\n<s></s><|endoftext|>\xf0\x9f\x98\x80 123";
        write_vocab_seed(spm_vocab(), dir + "/tokenizer_vocab/spm", 3, text);
        write_vocab_seed(bpe_vocab("gpt-2"), dir + "/tokenizer_vocab/bpe_gpt2", 3, text);
        write_vocab_seed(bpe_vocab("llama-bpe"), dir + "/tokenizer_vocab/bpe_llama3", 1, text);
        write_vocab_seed(bpe_vocab("qwen2"), dir + "/tokenizer_vocab/bpe_qwen2", 2, text);
    } catch (const rf::Error &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
