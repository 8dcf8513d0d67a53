// Output file that appears at its destination only when complete: data goes to
// `path + ".tmp"`, commit() flushes, fsyncs and renames it over `path`. If the object is
// destroyed without commit() (an error or exception), the temporary file is removed and any
// existing file at `path` is left untouched. Writes are buffered; every failure (cannot open,
// disk full, rename) throws rf::Error naming the file and the OS reason.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rf {

class AtomicFile {
public:
    explicit AtomicFile(std::string path);
    ~AtomicFile();
    AtomicFile(const AtomicFile &) = delete;
    AtomicFile &operator=(const AtomicFile &) = delete;

    void write(const void *data, size_t n);
    void write_zeros(size_t n);
    uint64_t bytes_written() const { return written_; }
    void commit();

    const std::string &path() const { return path_; }
    const std::string &temp_path() const { return tmp_path_; }

private:
    void flush_buffer();
    void write_fully(const uint8_t *p, size_t n);
    void discard() noexcept;

    std::string path_;
    std::string tmp_path_;
    int fd_ = -1;
    bool committed_ = false;
    uint64_t written_ = 0;
    std::vector<uint8_t> buf_;
    size_t buf_used_ = 0;
};

} // namespace rf
