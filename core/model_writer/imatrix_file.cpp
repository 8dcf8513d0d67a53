// Importance-matrix files: llama.cpp's GGUF imatrix (tools/imatrix/imatrix.cpp save_imatrix,
// tools/quantize/quantize.cpp load_imatrix) and its legacy .dat layout: int32 entry count, per
// entry an int32 name length, the name, int32 ncall, int32 nval and nval floats (the means of
// x^2 times ncall), then optionally int32 chunk count and a length-prefixed dataset name.
#include "rocmforge/imatrix.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "rocmforge/error.h"
#include "rocmforge/gguf.h"
#include "rocmforge/types.h"

namespace rf {
namespace {

constexpr const char *kSum2 = ".in_sum2", *kSum = ".in_sum", *kCounts = ".counts";

bool ends_with(const std::string &s, const char *suffix, std::string *stem) {
    const size_t n = std::strlen(suffix);
    if (s.size() <= n || s.compare(s.size() - n, n, suffix) != 0) return false;
    *stem = s.substr(0, s.size() - n);
    return true;
}

std::vector<float> f32_tensor(const gguf::File &f, const gguf::TensorInfo &t, const std::string &path) {
    if (t.type != RF_TYPE_F32)
        throw Error(path + ": imatrix tensor '" + t.name + "' is " + type_name(t.type) + ", expected f32");
    std::vector<float> v(size_t(t.n_elements()));
    std::memcpy(v.data(), f.tensor_data(t), v.size() * sizeof(float));
    for (float x : v)
        if (!std::isfinite(x)) throw Error(path + ": imatrix tensor '" + t.name + "' holds a non-finite value");
    return v;
}

Imatrix read_gguf(const std::string &path) {
    auto f = gguf::File::open(path);
    const std::string type = f->get_string("general.type", "");
    if (type != "imatrix")
        throw Error(path + ": not an importance matrix (general.type is '" + type + "', expected 'imatrix')");
    Imatrix m;
    if (const gguf::Value *d = f->find("imatrix.datasets"); d && d->is_array())
        for (const gguf::Value &s : d->arr)
            if (s.is_string()) m.datasets.push_back(s.s);
    m.chunk_count = uint32_t(f->get_int("imatrix.chunk_count", 0));
    m.chunk_size = uint32_t(f->get_int("imatrix.chunk_size", 0));
    std::map<std::string, const gguf::TensorInfo *> sum2, sum, counts;
    for (const gguf::TensorInfo &t : f->tensors()) {
        std::string stem;
        if (ends_with(t.name, kSum2, &stem)) sum2[stem] = &t;
        else if (ends_with(t.name, kSum, &stem)) sum[stem] = &t;
        else if (ends_with(t.name, kCounts, &stem)) counts[stem] = &t;
        else throw Error(path + ": unexpected tensor '" + t.name + "' in an importance matrix");
    }
    for (const auto &[name, c] : counts)
        if (!sum2.count(name)) throw Error(path + ": '" + name + ".counts' has no '" + name + ".in_sum2'");
    for (const auto &[name, s] : sum2) {
        const auto c = counts.find(name);
        if (c == counts.end()) throw Error(path + ": '" + name + ".in_sum2' has no '" + name + ".counts'");
        if (s->n_dims > 2 || c->second->ne[0] != 1 || c->second->ne[1] != s->ne[1] || c->second->n_dims > 2)
            throw Error(path + ": '" + name + "': in_sum2 is [" + std::to_string(s->ne[0]) + ", " +
                        std::to_string(s->ne[1]) + "] but counts is [" + std::to_string(c->second->ne[0]) + ", " +
                        std::to_string(c->second->ne[1]) + "], expected [1, " + std::to_string(s->ne[1]) + "]");
        ImatrixEntry e;
        e.n_cols = s->ne[0];
        e.sum2 = f32_tensor(*f, *s, path);
        e.counts = f32_tensor(*f, *c->second, path);
        for (float n : e.counts)
            if (n < 0) throw Error(path + ": '" + name + ".counts' holds a negative count");
        if (const auto a = sum.find(name); a != sum.end()) {
            if (a->second->ne[0] != s->ne[0] || a->second->ne[1] != s->ne[1])
                throw Error(path + ": '" + name + ".in_sum' and '" + name + ".in_sum2' differ in shape");
            e.sum = f32_tensor(*f, *a->second, path);
        }
        m.entries.emplace(name, std::move(e));
    }
    if (m.entries.empty()) throw Error(path + ": the importance matrix has no entries");
    return m;
}

// Bounds-checked little-endian reads of the legacy file.
struct Cursor {
    const std::vector<char> &b;
    const std::string &path;
    size_t pos = 0;
    bool at_end() const { return pos == b.size(); }
    void need(size_t n, const char *what) const {
        if (b.size() - pos < n)
            throw Error(path + ": truncated legacy importance matrix (" + what + " at byte " + std::to_string(pos) + ")");
    }
    int32_t i32(const char *what) {
        need(4, what);
        int32_t v;
        std::memcpy(&v, b.data() + pos, 4);
        pos += 4;
        return v;
    }
    std::string str(int32_t len, const char *what) {
        need(size_t(len), what);
        std::string s(b.data() + pos, size_t(len));
        pos += size_t(len);
        return s;
    }
};

Imatrix read_legacy(const std::string &path, const std::vector<char> &bytes) {
    Cursor c{bytes, path};
    const int32_t n_entries = c.i32("entry count");
    if (n_entries < 1 || n_entries > 1000000)
        throw Error(path + ": not an importance matrix (neither GGUF nor a legacy .dat with 1..1000000 entries)");
    Imatrix m;
    for (int32_t k = 0; k < n_entries; ++k) {
        const int32_t len = c.i32("name length");
        if (len <= 0 || len > 4096) throw Error(path + ": bad name length " + std::to_string(len) + " of entry " + std::to_string(k));
        const std::string name = c.str(len, "name");
        const int32_t ncall = c.i32("call count");
        const int32_t nval = c.i32("value count");
        if (ncall < 0 || nval <= 0)
            throw Error(path + ": entry '" + name + "' has " + std::to_string(ncall) + " calls and " + std::to_string(nval) + " values");
        c.need(size_t(nval) * 4, "values");
        ImatrixEntry e;
        e.n_cols = nval;
        e.sum2.resize(size_t(nval));
        std::memcpy(e.sum2.data(), bytes.data() + c.pos, size_t(nval) * 4);
        c.pos += size_t(nval) * 4;
        for (float x : e.sum2)
            if (!std::isfinite(x)) throw Error(path + ": entry '" + name + "' holds a non-finite value");
        // The values are means times ncall; llama-quantize divides by ncall when it is > 0.
        e.counts = {float(ncall > 0 ? ncall : 1)};
        if (!m.entries.emplace(name, std::move(e)).second) throw Error(path + ": entry '" + name + "' appears twice");
    }
    if (!c.at_end()) {
        m.chunk_count = uint32_t(std::max(0, c.i32("chunk count")));
        if (!c.at_end()) {
            const int32_t len = c.i32("dataset name length");
            if (len < 0 || len > 65536) throw Error(path + ": bad dataset name length " + std::to_string(len));
            m.datasets.push_back(c.str(len, "dataset name"));
        }
        if (!c.at_end()) throw Error(path + ": unexpected bytes after the legacy importance matrix");
    }
    return m;
}

} // namespace

std::vector<float> ImatrixEntry::weights() const {
    std::vector<float> w(sum2.size());
    for (size_t j = 0; j < counts.size(); ++j)
        for (int64_t i = 0; i < n_cols; ++i) {
            const size_t k = j * size_t(n_cols) + size_t(i);
            w[k] = counts[j] > 0.0f ? sum2[k] / counts[j] : 1.0f;
        }
    return w;
}

Imatrix read_imatrix(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("cannot open importance matrix '" + path + "'");
    char magic[4] = {};
    in.read(magic, 4);
    if (in.gcount() == 4 && std::memcmp(magic, "GGUF", 4) == 0) return read_gguf(path);
    in.clear();
    in.seekg(0);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return read_legacy(path, bytes);
}

void write_imatrix(const Imatrix &m, const std::string &path) {
    gguf::Writer w;
    w.set("general.type", gguf::Value::from_string("imatrix"));
    w.set("imatrix.datasets", gguf::Value::from_strings(m.datasets));
    w.set("imatrix.chunk_count", gguf::Value::from_u32(m.chunk_count));
    w.set("imatrix.chunk_size", gguf::Value::from_u32(m.chunk_size));
    for (const auto &[name, e] : m.entries) {
        const int64_t n_mat = e.n_mat();
        if (n_mat <= 0 || e.n_cols <= 0 || int64_t(e.sum2.size()) != n_mat * e.n_cols)
            throw Error("write_imatrix: entry '" + name + "' has inconsistent sizes");
        w.add_tensor(name + kSum2, RF_TYPE_F32, {e.n_cols, n_mat}, e.sum2.data());
        w.add_tensor(name + kCounts, RF_TYPE_F32, {1, n_mat}, e.counts.data());
        if (!e.sum.empty()) w.add_tensor(name + kSum, RF_TYPE_F32, {e.n_cols, n_mat}, e.sum.data());
    }
    w.write(path);
}

} // namespace rf
