#include "input_file.h"

#include <cstdio>
#include <cstdlib>

#include <sys/mman.h>
#include <unistd.h>

namespace rf_fuzz {

namespace {
[[noreturn]] void die(const char *what) {
    std::perror(what);
    std::abort();
}
} // namespace

std::string input_file(const uint8_t *data, size_t size) {
    // memfd: no disk traffic and nothing left behind, whatever way the process ends.
    static const int fd = [] {
        const int f = ::memfd_create("rf-fuzz-input", MFD_CLOEXEC);
        if (f < 0) die("memfd_create");
        return f;
    }();
    if (::ftruncate(fd, 0) != 0) die("ftruncate");
    for (size_t done = 0; done < size;) {
        const ssize_t n = ::pwrite(fd, data + done, size - done, off_t(done));
        if (n <= 0) die("pwrite");
        done += size_t(n);
    }
    return "/proc/self/fd/" + std::to_string(fd);
}

} // namespace rf_fuzz
