// GGUF v3 writer. The header (metadata + tensor infos) is built in memory; tensor data is
// streamed one tensor at a time through AtomicFile, so the file appears at its destination
// only once complete.
#include <array>
#include <cstring>
#include <unordered_set>

#include "rocmforge/atomic_file.h"
#include "rocmforge/error.h"
#include "rocmforge/gguf.h"
#include "rocmforge/types.h"

namespace rf::gguf {

namespace {

constexpr uint64_t kDefaultAlignment = 32;
constexpr const char *kAlignmentKey = "general.alignment";

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

bool is_power_of_two(uint64_t a) { return a != 0 && (a & (a - 1)) == 0; }

class HeaderBuffer {
public:
    // Reserving up front also avoids a GCC 12 -Wstringop-overflow false positive on the
    // first insert into an empty vector.
    HeaderBuffer() { bytes.reserve(1 << 16); }
    template <typename T> void put(T v) {
        const auto *p = reinterpret_cast<const uint8_t *>(&v);
        bytes.insert(bytes.end(), p, p + sizeof(T));
    }
    void put_string(const std::string &s) {
        put<uint64_t>(s.size());
        bytes.insert(bytes.end(), s.begin(), s.end());
    }
    // `where` names the key for error messages.
    void put_value(const Value &v, const std::string &where) {
        switch (v.type) {
        case ValueType::UINT8: put<uint8_t>(uint8_t(v.u)); break;
        case ValueType::INT8: put<int8_t>(int8_t(v.i)); break;
        case ValueType::UINT16: put<uint16_t>(uint16_t(v.u)); break;
        case ValueType::INT16: put<int16_t>(int16_t(v.i)); break;
        case ValueType::UINT32: put<uint32_t>(uint32_t(v.u)); break;
        case ValueType::INT32: put<int32_t>(int32_t(v.i)); break;
        case ValueType::UINT64: put<uint64_t>(v.u); break;
        case ValueType::INT64: put<int64_t>(v.i); break;
        case ValueType::FLOAT32: put<float>(float(v.f)); break;
        case ValueType::FLOAT64: put<double>(v.f); break;
        case ValueType::BOOL: put<uint8_t>(v.u ? 1 : 0); break;
        case ValueType::STRING: put_string(v.s); break;
        case ValueType::ARRAY:
            put<uint32_t>(uint32_t(v.elem_type));
            put<uint64_t>(v.arr.size());
            for (const Value &item : v.arr) {
                if (item.type != v.elem_type)
                    throw Error("GGUF writer: array '" + where + "' declares element type " +
                                value_type_name(v.elem_type) + " but holds a " +
                                value_type_name(item.type));
                put_value(item, where);
            }
            break;
        default:
            throw Error("GGUF writer: key '" + where + "' has unknown value type " +
                        std::to_string(uint32_t(v.type)));
        }
    }
    std::vector<uint8_t> bytes;
};

} // namespace

Writer::Writer() = default;

void Writer::set(const std::string &key, Value v) {
    if (key == kAlignmentKey) {
        if (v.type == ValueType::BOOL || !v.is_integer() || v.as_int() <= 0 ||
            !is_power_of_two(uint64_t(v.as_int())))
            throw Error("GGUF writer: general.alignment must be a nonzero power of two, got " +
                        v.to_string());
        alignment_ = uint64_t(v.as_int());
    }
    for (auto &kv : kvs_) {
        if (kv.key == key) {
            kv.value = std::move(v);
            return;
        }
    }
    kvs_.push_back({key, std::move(v)});
}

void Writer::set_alignment(uint64_t a) {
    if (!is_power_of_two(a) || a > UINT32_MAX)
        throw Error("GGUF writer: alignment " + std::to_string(a) +
                    " is not a power of two that fits in 32 bits");
    const bool present = [&] {
        for (const auto &kv : kvs_)
            if (kv.key == kAlignmentKey) return true;
        return false;
    }();
    if (a != kDefaultAlignment || present) set(kAlignmentKey, Value::from_u32(uint32_t(a)));
    alignment_ = a;
}

namespace {
TensorInfo make_info(const std::string &name, int type, const std::vector<int64_t> &ne) {
    const std::string what = "GGUF writer: tensor '" + name + "'";
    if (!type_is_known(type)) throw Error(what + " has unknown type id " + std::to_string(type));
    if (ne.empty() || ne.size() > 4)
        throw Error(what + " needs 1 to 4 dimensions, got " + std::to_string(ne.size()));
    TensorInfo t;
    t.name = name;
    t.type = type;
    t.n_dims = int(ne.size());
    int64_t elements = 1;
    for (size_t d = 0; d < ne.size(); ++d) {
        if (ne[d] <= 0)
            throw Error(what + " dimension " + std::to_string(d) + " is " +
                        std::to_string(ne[d]));
        if (__builtin_mul_overflow(elements, ne[d], &elements))
            throw Error(what + " has too many elements");
        t.ne[d] = ne[d];
    }
    const int64_t block = type_traits(type)->block_size;
    if (t.ne[0] % block != 0)
        throw Error(what + " row length " + std::to_string(t.ne[0]) +
                    " is not a multiple of the " + type_name(type) + " block size " +
                    std::to_string(block));
    // Checked before calling row_size, which does not guard against overflow.
    const uint64_t rows = uint64_t(t.ne[1] * t.ne[2] * t.ne[3]);
    const uint64_t blocks = uint64_t(t.ne[0] / block);
    uint64_t row_bytes = 0;
    if (__builtin_mul_overflow(blocks, uint64_t(type_traits(type)->type_size), &row_bytes) ||
        __builtin_mul_overflow(row_bytes, rows, &t.nbytes))
        throw Error(what + " byte size overflows");
    t.nbytes = uint64_t(row_size(type, t.ne[0])) * rows;
    return t;
}
} // namespace

void Writer::add_tensor(const std::string &name, int type, const std::vector<int64_t> &ne,
                        const void *data) {
    if (!data) throw Error("GGUF writer: tensor '" + name + "' has no data");
    PendingTensor p;
    p.info = make_info(name, type, ne);
    p.data = data;
    for (const auto &t : tensors_)
        if (t.info.name == name) throw Error("GGUF writer: duplicate tensor name '" + name + "'");
    tensors_.push_back(std::move(p));
}

void Writer::add_tensor(const std::string &name, int type, const std::vector<int64_t> &ne,
                        std::function<void(uint8_t *dst)> fill) {
    if (!fill) throw Error("GGUF writer: tensor '" + name + "' has no fill function");
    PendingTensor p;
    p.info = make_info(name, type, ne);
    p.fill = std::move(fill);
    for (const auto &t : tensors_)
        if (t.info.name == name) throw Error("GGUF writer: duplicate tensor name '" + name + "'");
    tensors_.push_back(std::move(p));
}

void Writer::write(const std::string &path) const {
    // Data offsets: each tensor starts at the next multiple of the alignment.
    std::vector<uint64_t> offsets;
    uint64_t end = 0;
    for (const auto &t : tensors_) {
        const uint64_t off = align_up(end, alignment_);
        offsets.push_back(off);
        end = off + t.info.nbytes;
    }

    HeaderBuffer h;
    h.put<std::array<char, 4>>({'G', 'G', 'U', 'F'});
    h.put<uint32_t>(3);
    h.put<uint64_t>(tensors_.size());
    h.put<uint64_t>(kvs_.size());
    for (const auto &kv : kvs_) {
        h.put_string(kv.key);
        h.put<uint32_t>(uint32_t(kv.value.type));
        h.put_value(kv.value, kv.key);
    }
    for (size_t k = 0; k < tensors_.size(); ++k) {
        const TensorInfo &t = tensors_[k].info;
        h.put_string(t.name);
        h.put<uint32_t>(uint32_t(t.n_dims));
        for (int d = 0; d < t.n_dims; ++d) h.put<int64_t>(t.ne[d]);
        h.put<uint32_t>(uint32_t(t.type));
        h.put<uint64_t>(offsets[k]);
    }

    AtomicFile out(path); // removes its temp file if anything below throws
    out.write(h.bytes.data(), h.bytes.size());
    const uint64_t data_start = align_up(h.bytes.size(), alignment_);
    out.write_zeros(data_start - h.bytes.size());
    std::vector<uint8_t> buffer;
    for (size_t k = 0; k < tensors_.size(); ++k) {
        const PendingTensor &t = tensors_[k];
        out.write_zeros(data_start + offsets[k] - out.bytes_written());
        if (t.data) {
            out.write(t.data, t.info.nbytes);
        } else {
            // One tensor in memory at a time; zeroed so a partial filler leaves no garbage.
            buffer.assign(t.info.nbytes, 0);
            t.fill(buffer.data());
            out.write(buffer.data(), buffer.size());
        }
    }
    // ggml pads the last tensor too, so the file size is a multiple of the alignment.
    out.write_zeros(align_up(out.bytes_written(), alignment_) - out.bytes_written());
    out.commit();
}

} // namespace rf::gguf
