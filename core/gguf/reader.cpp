// GGUF v2/v3 reader: maps the file read-only and validates every field before the rest of
// the runtime sees it. Layout (all little-endian):
//   "GGUF" u32 version, u64 n_tensors, u64 n_kv,
//   n_kv x { string key, u32 value_type, value },
//   n_tensors x { string name, u32 n_dims, i64 ne[n_dims], u32 type, u64 offset },
//   padding to `general.alignment` (default 32), tensor data (offsets relative to here).
// A string is u64 length + bytes; an array is u32 element type + u64 count + items.
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <new>
#include <numeric>
#include <unordered_set>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "byte_cursor.h"
#include "rocmforge/error.h"
#include "rocmforge/escape.h"
#include "rocmforge/gguf.h"
#include "rocmforge/types.h"

namespace rf::gguf {

namespace {

using detail::ByteCursor;

constexpr uint64_t kDefaultAlignment = 32;
constexpr int kMaxDims = 4;
// Arrays of arrays are legal; the bound keeps a hostile file from exhausting the stack.
constexpr int kMaxArrayNesting = 16;
// Each item becomes a ~90-byte Value, so a tiny encoding (1-byte items) could otherwise make a
// hostile file allocate ~90x its size. Real vocabularies hold about a million items in all.
constexpr uint64_t kMaxArrayItems = uint64_t(1) << 24;
// Smallest possible encodings, used to reject counts the remaining bytes cannot hold.
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;              // empty key, type, 1-byte value
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8; // empty name, n_dims 0, type, offset

bool valid_value_type(uint32_t t) { return t <= uint32_t(ValueType::FLOAT64); }

// Bytes of the smallest encoding of one value of type t.
uint64_t min_encoded_size(ValueType t) {
    switch (t) {
    case ValueType::UINT8:
    case ValueType::INT8:
    case ValueType::BOOL: return 1;
    case ValueType::UINT16:
    case ValueType::INT16: return 2;
    case ValueType::UINT32:
    case ValueType::INT32:
    case ValueType::FLOAT32: return 4;
    case ValueType::UINT64:
    case ValueType::INT64:
    case ValueType::FLOAT64:
    case ValueType::STRING: return 8;
    case ValueType::ARRAY: return 4 + 8;
    }
    return 1;
}

// Read-only private mapping of a whole file; unmapped by File's destructor.
struct Mapping {
    const uint8_t *base = nullptr;
    uint64_t size = 0;
};

Mapping map_file(const std::string &path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error("cannot open '" + path + "': " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        throw Error("cannot stat '" + path + "': " + std::strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        throw Error("'" + path + "' is not a regular file");
    }
    Mapping m;
    m.size = uint64_t(st.st_size);
    if (m.size > 0) {
        void *p = ::mmap(nullptr, m.size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            const int err = errno;
            ::close(fd);
            throw Error("cannot map '" + path + "': " + std::strerror(err));
        }
        m.base = static_cast<const uint8_t *>(p);
    }
    ::close(fd); // the mapping stays valid without the descriptor
    return m;
}

bool checked_mul(int64_t a, int64_t b, int64_t *out) { return !__builtin_mul_overflow(a, b, out); }

} // namespace

// Fills a File from its mapped bytes. Friend of File.
class Parser {
public:
    explicit Parser(File &f) : f_(f), in_(f.base_, f.size_, f.path_) {}

    void parse() {
        read_header();
        for (uint64_t k = 0; k < n_kv_; ++k) read_kv();
        apply_alignment();
        for (uint64_t k = 0; k < n_tensors_; ++k) read_tensor_info();
        place_data_section();
        check_tensor_ranges();
    }

private:
    void read_header() {
        if (in_.size() < 4)
            in_.fail("truncated header: the file is only " + std::to_string(in_.size()) +
                         " bytes",
                     0);
        const auto magic = in_.read<std::array<char, 4>>("magic");
        if (std::memcmp(magic.data(), "GGUF", 4) != 0)
            in_.fail("bad magic " + quote_name({magic.data(), 4}) + " (expected 'GGUF')", 0);
        const uint64_t at = in_.pos();
        const uint32_t version = in_.read<uint32_t>("header (version)");
        if (version == 1)
            in_.fail("GGUF version 1 is not supported (only versions 2 and 3 are)", at);
        if (version == 0x02000000u || version == 0x03000000u)
            in_.fail("big-endian GGUF files are not supported", at);
        if (version != 2 && version != 3)
            in_.fail("unknown GGUF version " + std::to_string(version) + " (supported: 2, 3)", at);
        f_.version_ = version;

        const uint64_t tensors_at = in_.pos();
        n_tensors_ = in_.read<uint64_t>("header (tensor count)");
        const uint64_t kv_at = in_.pos();
        n_kv_ = in_.read<uint64_t>("header (metadata count)");
        if (n_kv_ > in_.remaining() / kMinKvBytes)
            in_.fail("metadata count " + std::to_string(n_kv_) + " cannot fit in the " +
                         std::to_string(in_.remaining()) + " bytes after the header",
                     kv_at);
        if (n_tensors_ > in_.remaining() / kMinTensorInfoBytes)
            in_.fail("tensor count " + std::to_string(n_tensors_) + " cannot fit in the " +
                         std::to_string(in_.remaining()) + " bytes after the header",
                     tensors_at);
    }

    void read_kv() {
        const uint64_t at = in_.pos();
        std::string key = in_.read_string("metadata key");
        if (key == "general.alignment") alignment_kv_pos_ = at;
        if (!keys_.insert(key).second) in_.fail("duplicate metadata key " + quote_name(key), at);
        const uint64_t type_at = in_.pos();
        const uint32_t type = in_.read<uint32_t>("metadata value type");
        if (!valid_value_type(type))
            in_.fail("unknown value type " + std::to_string(type) + " for key " + quote_name(key),
                     type_at);
        KeyValue kv;
        kv.value = read_value(ValueType(type), key, 0);
        kv.key = std::move(key);
        f_.kvs_.push_back(std::move(kv));
    }

    Value read_value(ValueType t, const std::string &key, int depth) {
        Value v;
        v.type = t;
        switch (t) {
        case ValueType::UINT8: v.u = in_.read<uint8_t>("uint8 value"); break;
        case ValueType::INT8: v.i = in_.read<int8_t>("int8 value"); break;
        case ValueType::UINT16: v.u = in_.read<uint16_t>("uint16 value"); break;
        case ValueType::INT16: v.i = in_.read<int16_t>("int16 value"); break;
        case ValueType::UINT32: v.u = in_.read<uint32_t>("uint32 value"); break;
        case ValueType::INT32: v.i = in_.read<int32_t>("int32 value"); break;
        case ValueType::UINT64: v.u = in_.read<uint64_t>("uint64 value"); break;
        case ValueType::INT64: v.i = in_.read<int64_t>("int64 value"); break;
        case ValueType::FLOAT32: v.f = in_.read<float>("float32 value"); break;
        case ValueType::FLOAT64: v.f = in_.read<double>("float64 value"); break;
        case ValueType::BOOL: v.u = in_.read<uint8_t>("bool value") != 0; break;
        case ValueType::STRING: v.s = in_.read_string("string value of " + quote_name(key)); break;
        case ValueType::ARRAY: read_array(v, key, depth); break;
        }
        return v;
    }

    void read_array(Value &v, const std::string &key, int depth) {
        if (depth >= kMaxArrayNesting)
            in_.fail("arrays nested deeper than " + std::to_string(kMaxArrayNesting) + " levels in key " +
                     quote_name(key));
        const uint64_t type_at = in_.pos();
        const uint32_t elem = in_.read<uint32_t>("array element type");
        if (!valid_value_type(elem))
            in_.fail("unknown array element type " + std::to_string(elem) + " in key " + quote_name(key),
                     type_at);
        v.elem_type = ValueType(elem);
        const uint64_t len_at = in_.pos();
        const uint64_t n = in_.read<uint64_t>("array length");
        if (n > in_.remaining() / min_encoded_size(v.elem_type))
            in_.fail("array length " + std::to_string(n) + " of key " + quote_name(key) +
                         " runs past the end of the file (" + std::to_string(in_.remaining()) +
                         " bytes left)",
                     len_at);
        array_items_ += n;
        if (array_items_ > kMaxArrayItems)
            in_.fail("metadata arrays hold more than " + std::to_string(kMaxArrayItems) +
                         " items in all (at key " + quote_name(key) + ")",
                     len_at);
        v.arr.reserve(n);
        for (uint64_t k = 0; k < n; ++k) v.arr.push_back(read_value(v.elem_type, key, depth + 1));
    }

    void apply_alignment() {
        f_.alignment_ = kDefaultAlignment;
        const Value *a = f_.find("general.alignment");
        if (!a) return;
        if (a->type == ValueType::BOOL || !a->is_integer())
            in_.fail("general.alignment has type " + std::string(value_type_name(a->type)) +
                         ", expected an unsigned integer",
                     alignment_kv_pos_);
        const bool is_signed = a->type == ValueType::INT8 || a->type == ValueType::INT16 ||
                               a->type == ValueType::INT32 || a->type == ValueType::INT64;
        const uint64_t align = is_signed ? (a->i > 0 ? uint64_t(a->i) : 0) : a->u;
        if (align == 0 || (align & (align - 1)) != 0)
            in_.fail("general.alignment " + a->to_string() + " is not a nonzero power of two",
                     alignment_kv_pos_);
        f_.alignment_ = align;
    }

    void read_tensor_info() {
        const uint64_t at = in_.pos();
        TensorInfo t;
        t.name = in_.read_string("tensor name");
        if (!names_.insert(t.name).second) in_.fail("duplicate tensor name " + quote_name(t.name), at);
        const std::string what = "tensor " + quote_name(t.name);

        const uint64_t dims_at = in_.pos();
        const uint32_t n_dims = in_.read<uint32_t>("tensor dimension count");
        if (n_dims > uint32_t(kMaxDims))
            in_.fail(what + " has " + std::to_string(n_dims) + " dimensions (at most " +
                         std::to_string(kMaxDims) + " are supported)",
                     dims_at);
        t.n_dims = int(n_dims);
        int64_t elements = 1;
        for (uint32_t d = 0; d < n_dims; ++d) {
            const uint64_t ne_at = in_.pos();
            t.ne[d] = in_.read<int64_t>("tensor dimensions");
            if (t.ne[d] <= 0)
                in_.fail(what + " dimension " + std::to_string(d) + " is " +
                             std::to_string(t.ne[d]) + " (must be > 0)",
                         ne_at);
            if (!checked_mul(elements, t.ne[d], &elements))
                in_.fail(what + " has too many elements (the product of its dimensions overflows)",
                         ne_at);
        }

        const uint64_t type_at = in_.pos();
        const uint32_t type = in_.read<uint32_t>("tensor type");
        if (type > uint32_t(INT32_MAX) || !type_is_known(int(type)))
            in_.fail(what + " has unknown type id " + std::to_string(type), type_at);
        t.type = int(type);
        const TypeTraits *tt = type_traits(t.type);
        if (!tt || tt->block_size <= 0 || t.ne[0] % tt->block_size != 0)
            in_.fail(what + " row length " + std::to_string(t.ne[0]) +
                         " is not a multiple of the " + type_name(t.type) + " block size " +
                         std::to_string(tt ? tt->block_size : 0),
                     dims_at);
        // Checked before calling row_size, which does not guard against overflow.
        const int64_t rows = t.ne[1] * t.ne[2] * t.ne[3]; // cannot overflow: checked above
        const uint64_t blocks = uint64_t(t.ne[0] / tt->block_size);
        uint64_t row_bytes = 0;
        if (__builtin_mul_overflow(blocks, uint64_t(tt->type_size), &row_bytes) ||
            __builtin_mul_overflow(row_bytes, uint64_t(rows), &t.nbytes))
            in_.fail(what + " byte size overflows", dims_at);
        t.nbytes = uint64_t(row_size(t.type, t.ne[0])) * uint64_t(rows);

        const uint64_t offset_at = in_.pos();
        t.offset = in_.read<uint64_t>("tensor data offset");
        if (t.offset % f_.alignment_ != 0)
            in_.fail(what + " data offset " + std::to_string(t.offset) +
                         " is not a multiple of the alignment " + std::to_string(f_.alignment_),
                     offset_at);
        offset_field_pos_.push_back(offset_at);
        f_.tensors_.push_back(std::move(t));
    }

    void place_data_section() {
        const uint64_t end_of_infos = in_.pos();
        const uint64_t a = f_.alignment_;
        // Round up; a data section that would start past the end is only an error if some
        // tensor has data (vocab-only files end right after the metadata).
        const uint64_t rem = end_of_infos % a;
        if (rem == 0) {
            f_.data_offset_ = end_of_infos;
        } else if (__builtin_add_overflow(end_of_infos, a - rem, &f_.data_offset_)) {
            in_.fail("data section offset overflows with alignment " + std::to_string(a),
                     end_of_infos);
        }
    }

    void check_tensor_ranges() {
        const auto &ts = f_.tensors_;
        const uint64_t size = f_.size_;
        const uint64_t data_bytes = size >= f_.data_offset_ ? size - f_.data_offset_ : 0;
        for (size_t k = 0; k < ts.size(); ++k) {
            const TensorInfo &t = ts[k];
            if (f_.data_offset_ > size || t.offset > data_bytes || t.nbytes > data_bytes - t.offset)
                in_.fail("data of tensor " + quote_name(t.name) + " (" + std::to_string(t.nbytes) +
                             " bytes at data offset " + std::to_string(t.offset) +
                             ") runs past the end of the file (data section starts at byte " +
                             std::to_string(f_.data_offset_) + ", file size " +
                             std::to_string(size) + ")",
                         offset_field_pos_[k]);
        }
        std::vector<size_t> order(ts.size());
        std::iota(order.begin(), order.end(), size_t(0));
        std::sort(order.begin(), order.end(),
                  [&](size_t x, size_t y) { return ts[x].offset < ts[y].offset; });
        for (size_t k = 1; k < order.size(); ++k) {
            const TensorInfo &prev = ts[order[k - 1]];
            const TensorInfo &cur = ts[order[k]];
            if (prev.offset + prev.nbytes > cur.offset) // in bounds, so no overflow
                in_.fail("data of tensor " + quote_name(cur.name) + " (data offset " +
                             std::to_string(cur.offset) + ") overlaps tensor " + quote_name(prev.name) +
                             " (data offset " + std::to_string(prev.offset) + ", " +
                             std::to_string(prev.nbytes) + " bytes)",
                         offset_field_pos_[order[k]]);
        }
    }

    File &f_;
    ByteCursor in_;
    uint64_t n_tensors_ = 0;
    uint64_t n_kv_ = 0;
    std::unordered_set<std::string> keys_;
    std::unordered_set<std::string> names_;
    std::vector<uint64_t> offset_field_pos_;
    uint64_t alignment_kv_pos_ = 0;
    uint64_t array_items_ = 0;
};

std::unique_ptr<File> File::open(const std::string &path) {
    const Mapping m = map_file(path);
    std::unique_ptr<File> f(new File());
    f->path_ = path;
    f->base_ = m.base;
    f->size_ = m.size;
    try {
        Parser(*f).parse(); // on error, ~File unmaps
    } catch (const std::bad_alloc &) {
        throw Error(path + ": out of memory while reading the GGUF metadata");
    }
    return f;
}

File::~File() {
    if (base_) ::munmap(const_cast<uint8_t *>(base_), size_);
}

const Value *File::find(std::string_view key) const {
    for (const auto &kv : kvs_)
        if (kv.key == key) return &kv.value;
    return nullptr;
}

const TensorInfo *File::find_tensor(std::string_view name) const {
    for (const auto &t : tensors_)
        if (t.name == name) return &t;
    return nullptr;
}

namespace {
[[noreturn]] void wrong_type(const File &f, std::string_view key, const Value &v,
                             const char *expected) {
    throw Error(f.path() + ": metadata key '" + std::string(key) + "' has type " +
                value_type_name(v.type) + ", expected " + expected);
}
} // namespace

std::string File::get_string(std::string_view key, const std::string &def) const {
    const Value *v = find(key);
    if (!v) return def;
    if (!v->is_string()) wrong_type(*this, key, *v, "string");
    return v->s;
}

int64_t File::get_int(std::string_view key, int64_t def) const {
    const Value *v = find(key);
    if (!v) return def;
    if (!v->is_integer()) wrong_type(*this, key, *v, "an integer");
    try {
        return v->as_int();
    } catch (const Error &e) {
        throw Error(path_ + ": metadata key '" + std::string(key) + "': " + e.what());
    }
}

double File::get_float(std::string_view key, double def) const {
    const Value *v = find(key);
    if (!v) return def;
    if (!v->is_float() && (!v->is_integer() || v->type == ValueType::BOOL))
        wrong_type(*this, key, *v, "a number");
    return v->as_float();
}

bool File::get_bool(std::string_view key, bool def) const {
    const Value *v = find(key);
    if (!v) return def;
    if (v->type != ValueType::BOOL) wrong_type(*this, key, *v, "bool");
    return v->u != 0;
}

} // namespace rf::gguf
