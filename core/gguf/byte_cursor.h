// Bounds-checked little-endian reader over an in-memory byte range. Every read of a GGUF
// file goes through this class, so a malformed file can only produce an rf::Error, never an
// out-of-bounds read.
#pragma once
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "rocmforge/error.h"

namespace rf::gguf::detail {

static_assert(std::endian::native == std::endian::little,
              "the GGUF reader assumes a little-endian host");

class ByteCursor {
public:
    ByteCursor(const uint8_t *data, uint64_t size, std::string path)
        : data_(data), size_(size), path_(std::move(path)) {}

    uint64_t pos() const { return pos_; }
    uint64_t size() const { return size_; }
    uint64_t remaining() const { return size_ - pos_; }

    // Throws rf::Error "<path>: invalid GGUF: <what> (byte offset <at>)".
    [[noreturn]] void fail(const std::string &what, uint64_t at) const {
        throw Error(path_ + ": invalid GGUF: " + what + " (byte offset " + std::to_string(at) +
                    ")");
    }
    [[noreturn]] void fail(const std::string &what) const { fail(what, pos_); }

    // `what` names the field for the "truncated" message, e.g. "tensor count".
    template <typename T> T read(const char *what) {
        static_assert(std::is_trivially_copyable_v<T>);
        require(sizeof(T), what);
        T v;
        std::memcpy(&v, data_ + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }

    // A GGUF string: uint64 length followed by that many bytes (no terminator).
    std::string read_string(const std::string &what) {
        const uint64_t at = pos_;
        const uint64_t len = read<uint64_t>((what + " length").c_str());
        if (len > remaining())
            fail(what + " length " + std::to_string(len) + " runs past the end of the file (" +
                     std::to_string(remaining()) + " bytes left)",
                 at);
        std::string s(reinterpret_cast<const char *>(data_ + pos_), len);
        pos_ += len;
        return s;
    }

private:
    void require(uint64_t n, const char *what) const {
        if (n > remaining())
            fail(std::string("truncated ") + what + ": needs " + std::to_string(n) +
                 " bytes but only " + std::to_string(remaining()) + " remain");
    }

    const uint8_t *data_;
    uint64_t size_;
    uint64_t pos_ = 0;
    std::string path_;
};

} // namespace rf::gguf::detail
