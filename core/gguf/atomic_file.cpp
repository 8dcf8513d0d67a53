#include "rocmforge/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include "rocmforge/error.h"

namespace rf {

namespace {
constexpr size_t kBufferSize = size_t(1) << 20;

[[noreturn]] void fail_os(const std::string &action, const std::string &path, int err) {
    throw Error("cannot " + action + " '" + path + "': " + std::strerror(err));
}
} // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), tmp_path_(path_ + ".tmp") {
    fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) fail_os("create", tmp_path_, errno);
    buf_.resize(kBufferSize);
}

AtomicFile::~AtomicFile() {
    if (!committed_) discard();
}

void AtomicFile::discard() noexcept {
    if (fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
    }
    ::unlink(tmp_path_.c_str());
}

void AtomicFile::write_fully(const uint8_t *p, size_t n) {
    while (n > 0) {
        // Bounded chunks: Linux write() transfers at most ~2 GiB per call anyway.
        const size_t chunk = n < (size_t(1) << 30) ? n : (size_t(1) << 30);
        const ssize_t w = ::write(fd_, p, chunk);
        if (w < 0) {
            if (errno == EINTR) continue;
            fail_os("write", tmp_path_, errno);
        }
        if (w == 0) fail_os("write", tmp_path_, ENOSPC);
        p += w;
        n -= size_t(w);
    }
}

void AtomicFile::flush_buffer() {
    if (buf_used_ == 0) return;
    const size_t n = buf_used_;
    buf_used_ = 0;
    write_fully(buf_.data(), n);
}

void AtomicFile::write(const void *data, size_t n) {
    if (fd_ < 0) throw Error("write to '" + tmp_path_ + "' after it was closed");
    const auto *p = static_cast<const uint8_t *>(data);
    written_ += n;
    if (n >= buf_.size()) { // large blocks go straight to the file
        flush_buffer();
        write_fully(p, n);
        return;
    }
    if (buf_used_ + n > buf_.size()) flush_buffer();
    std::memcpy(buf_.data() + buf_used_, p, n);
    buf_used_ += n;
}

void AtomicFile::write_zeros(size_t n) {
    static const uint8_t zeros[4096] = {};
    while (n > 0) {
        const size_t k = n < sizeof(zeros) ? n : sizeof(zeros);
        write(zeros, k);
        n -= k;
    }
}

void AtomicFile::commit() {
    if (fd_ < 0) throw Error("commit of '" + tmp_path_ + "' after it was closed");
    flush_buffer();
    if (::fsync(fd_) != 0) fail_os("sync", tmp_path_, errno);
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail_os("close", tmp_path_, errno);
    if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0)
        fail_os("rename '" + tmp_path_ + "' to", path_, errno);
    committed_ = true;
}

} // namespace rf
