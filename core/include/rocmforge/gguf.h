// GGUF v2/v3 reader (mmap, fully validated) and writer (atomic: temp file + rename).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rf::gguf {

enum class ValueType : uint32_t {
    UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6, BOOL = 7,
    STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};
const char *value_type_name(ValueType t);

// One metadata value. Scalars keep their exact value; arrays keep their element type and items
// (nested arrays are allowed by the format and supported).
struct Value {
    ValueType type = ValueType::UINT32;
    ValueType elem_type = ValueType::UINT32; // arrays only
    uint64_t u = 0;      // unsigned ints and bool
    int64_t i = 0;       // signed ints
    double f = 0;        // floats
    std::string s;       // strings
    std::vector<Value> arr;

    bool is_array() const { return type == ValueType::ARRAY; }
    bool is_string() const { return type == ValueType::STRING; }
    bool is_integer() const; // any int type or bool
    bool is_float() const;
    int64_t as_int() const;    // ints, bool; throws rf::Error for others
    double as_float() const;   // ints and floats
    const std::string &as_string() const;
    // Human-readable rendering; arrays longer than max_items are elided.
    std::string to_string(size_t max_items = 8) const;

    static Value from_u32(uint32_t v);
    static Value from_i32(int32_t v);
    static Value from_u64(uint64_t v);
    static Value from_f32(float v);
    static Value from_bool(bool v);
    static Value from_string(std::string v);
    static Value from_strings(const std::vector<std::string> &v);
    static Value from_i32s(const std::vector<int32_t> &v);
    static Value from_f32s(const std::vector<float> &v);
};

struct KeyValue {
    std::string key;
    Value value;
};

struct TensorInfo {
    std::string name;
    int type = 0;          // enum rf_type
    int n_dims = 0;
    int64_t ne[4] = {1, 1, 1, 1};
    uint64_t offset = 0;   // relative to the data section
    uint64_t nbytes = 0;
    int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
};

class File {
public:
    // Opens and validates. Throws rf::Error (exit code 1) naming the problem and the byte offset.
    static std::unique_ptr<File> open(const std::string &path);
    ~File();
    File(const File &) = delete;
    File &operator=(const File &) = delete;

    const std::string &path() const { return path_; }
    uint32_t version() const { return version_; }
    uint64_t alignment() const { return alignment_; }
    uint64_t data_offset() const { return data_offset_; } // file offset of the data section
    uint64_t file_size() const { return size_; }

    const std::vector<KeyValue> &metadata() const { return kvs_; }
    const Value *find(std::string_view key) const;
    std::string get_string(std::string_view key, const std::string &def = "") const;
    int64_t get_int(std::string_view key, int64_t def) const;
    double get_float(std::string_view key, double def) const;
    bool get_bool(std::string_view key, bool def) const;

    const std::vector<TensorInfo> &tensors() const { return tensors_; }
    const TensorInfo *find_tensor(std::string_view name) const;
    const uint8_t *tensor_data(const TensorInfo &t) const { return base_ + data_offset_ + t.offset; }
    const uint8_t *mapped_base() const { return base_; }

private:
    File() = default;
    std::string path_;
    uint32_t version_ = 0;
    uint64_t alignment_ = 32;
    uint64_t data_offset_ = 0;
    uint64_t size_ = 0;
    const uint8_t *base_ = nullptr;
    std::vector<KeyValue> kvs_;
    std::vector<TensorInfo> tensors_;
    friend class Parser;
};

class Writer {
public:
    Writer();
    void set(const std::string &key, Value v); // replaces an existing key, keeps order otherwise
    void set_alignment(uint64_t a);            // also writes general.alignment when != 32
    // The data is read at write() time; the pointer must stay valid until then.
    void add_tensor(const std::string &name, int type, const std::vector<int64_t> &ne,
                    const void *data);
    // The filler is called at write() time with a buffer of the tensor's byte size.
    void add_tensor(const std::string &name, int type, const std::vector<int64_t> &ne,
                    std::function<void(uint8_t *dst)> fill);
    // Writes version 3 to `path + ".tmp"` then renames over `path`: an error never leaves a
    // truncated file at `path`. Throws rf::Error.
    void write(const std::string &path) const;

private:
    struct PendingTensor {
        TensorInfo info;
        const void *data = nullptr;
        std::function<void(uint8_t *)> fill;
    };
    uint64_t alignment_ = 32;
    std::vector<KeyValue> kvs_;
    std::vector<PendingTensor> tensors_;
};

} // namespace rf::gguf
