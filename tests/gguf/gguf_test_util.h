// Helpers shared by the GGUF tests: a scratch directory, file I/O, and RawGguf, a byte-level
// GGUF builder that (unlike rf::gguf::Writer) can produce malformed files on purpose.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include "rocmforge/error.h"
#include "rocmforge/gguf.h"

namespace gguf_test {

using Bytes = std::vector<uint8_t>;

// A fresh directory under the system temp dir, removed with its contents at scope exit.
struct TempDir {
    std::filesystem::path path;
    TempDir() {
        static int counter = 0;
        path = std::filesystem::temp_directory_path() /
               ("rf-gguf-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
        std::filesystem::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    std::string file(const std::string &name) const { return (path / name).string(); }
};

inline void write_file(const std::string &path, const Bytes &b) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char *>(b.data()), std::streamsize(b.size()));
    if (!out) throw std::runtime_error("test could not write " + path);
}

inline Bytes read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline std::string test_data_dir() {
    const char *d = std::getenv("RF_TEST_DATA");
    return d ? d : "";
}

// Little-endian encoders.
template <typename T> void put(Bytes &b, T v) {
    uint8_t raw[sizeof(T)];
    std::memcpy(raw, &v, sizeof(T));
    b.insert(b.end(), raw, raw + sizeof(T));
}
inline void put_str(Bytes &b, const std::string &s) {
    put<uint64_t>(b, s.size());
    b.insert(b.end(), s.begin(), s.end());
}

using rf::gguf::ValueType;

inline Bytes kv_string(const std::string &key, const std::string &v) {
    Bytes b;
    put_str(b, key);
    put<uint32_t>(b, uint32_t(ValueType::STRING));
    put_str(b, v);
    return b;
}
inline Bytes kv_u32(const std::string &key, uint32_t v) {
    Bytes b;
    put_str(b, key);
    put<uint32_t>(b, uint32_t(ValueType::UINT32));
    put<uint32_t>(b, v);
    return b;
}
inline Bytes kv_i32_array(const std::string &key, const std::vector<int32_t> &v) {
    Bytes b;
    put_str(b, key);
    put<uint32_t>(b, uint32_t(ValueType::ARRAY));
    put<uint32_t>(b, uint32_t(ValueType::INT32));
    put<uint64_t>(b, v.size());
    for (int32_t x : v) put<int32_t>(b, x);
    return b;
}

struct RawTensor {
    std::string name;
    std::vector<int64_t> ne;
    uint32_t type = 0; // F32
    uint64_t offset = 0;
    std::optional<uint32_t> n_dims; // overrides ne.size() when set
};

// A GGUF file assembled field by field; defaults give a small valid file.
struct RawGguf {
    char magic[4] = {'G', 'G', 'U', 'F'};
    uint32_t version = 3;
    std::optional<uint64_t> n_tensors, n_kv; // override the real counts
    std::vector<Bytes> kvs;
    std::vector<RawTensor> tensors;
    uint64_t alignment = 32; // where the data section starts
    Bytes data;

    static RawGguf valid() {
        RawGguf g;
        g.kvs.push_back(kv_string("general.architecture", "llama"));
        g.kvs.push_back(kv_u32("test.count", 7));
        g.kvs.push_back(kv_i32_array("test.list", {1, -2, 3}));
        g.tensors.push_back({"a", {4, 2}, 0, 0, {}});  // f32, 32 bytes
        g.tensors.push_back({"b", {8}, 0, 32, {}});    // f32, 32 bytes
        for (int k = 0; k < 16; ++k) put<float>(g.data, float(k) * 0.5f);
        return g;
    }

    // Header, metadata and tensor infos: everything before the data padding.
    Bytes header() const {
        Bytes b(magic, magic + 4);
        put<uint32_t>(b, version);
        put<uint64_t>(b, n_tensors.value_or(tensors.size()));
        put<uint64_t>(b, n_kv.value_or(kvs.size()));
        for (const auto &kv : kvs) b.insert(b.end(), kv.begin(), kv.end());
        for (const auto &t : tensors) {
            put_str(b, t.name);
            put<uint32_t>(b, t.n_dims.value_or(uint32_t(t.ne.size())));
            for (int64_t d : t.ne) put<int64_t>(b, d);
            put<uint32_t>(b, t.type);
            put<uint64_t>(b, t.offset);
        }
        return b;
    }

    Bytes bytes() const {
        Bytes b = header();
        while (b.size() % alignment) b.push_back(0);
        b.insert(b.end(), data.begin(), data.end());
        return b;
    }
};

// Writes `bytes` to `path`, opens it, and returns the rf::Error message ("" if it parsed).
// Any other exception type escapes and fails the calling test.
inline std::string open_error(const std::string &path, const Bytes &bytes) {
    write_file(path, bytes);
    try {
        rf::gguf::File::open(path);
    } catch (const rf::Error &e) {
        return e.what();
    }
    return "";
}

} // namespace gguf_test
