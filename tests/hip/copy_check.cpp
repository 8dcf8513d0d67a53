#include "copy_check.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace opcheck {
namespace {

uint8_t pattern(size_t chunk, size_t k) { return (uint8_t)(chunk * 131 + k * 7 + (k >> 9)); }

// `chunks` uploads of `bytes` each into one device buffer, all from one host buffer refilled
// after every upload, with no wait in between; then one download of the whole buffer.
void staged_uploads(Plugin &gpu, size_t chunks, size_t bytes, int &passed, int &failed) {
    const std::string what = "copies: " + std::to_string(chunks) + " uploads of " + std::to_string(bytes >> 10) + " KB, source reused";
    try {
        void *dev = gpu.alloc(chunks * bytes);
        std::vector<uint8_t> src(bytes), back(chunks * bytes);
        for (size_t c = 0; c < chunks; ++c) {
            for (size_t k = 0; k < bytes; ++k) src[k] = pattern(c, k);
            gpu.upload(static_cast<uint8_t *>(dev) + c * bytes, src.data(), bytes);
        }
        std::fill(src.begin(), src.end(), uint8_t(0xEE)); // the last upload's source, overwritten too
        gpu.download(back.data(), dev, back.size());
        size_t bad = 0, first = back.size();
        for (size_t c = 0; c < chunks; ++c)
            for (size_t k = 0; k < bytes; ++k)
                if (back[c * bytes + k] != pattern(c, k)) {
                    if (!bad) first = c * bytes + k;
                    ++bad;
                }
        const bool ok = bad == 0;
        std::printf("%s  %-52s %zu of %zu bytes wrong%s\n", ok ? "ok  " : "FAIL", what.c_str(), bad, back.size(),
                    ok ? "" : (" (first at " + std::to_string(first) + ")").c_str());
        (ok ? passed : failed)++;
    } catch (const std::exception &e) {
        std::printf("FAIL  %-52s %s\n", what.c_str(), e.what());
        ++failed;
    }
    gpu.free_all();
    std::fflush(stdout);
}

} // namespace

void check_copies(Plugin &gpu, int &passed, int &failed) {
    staged_uploads(gpu, 48, 200 << 10, passed, failed); // 9.6 MB: past the 4 MB of staging twice
    staged_uploads(gpu, 300, 4 << 10, passed, failed);  // many small ones (a decode step's inputs)
    staged_uploads(gpu, 3, 1 << 20, passed, failed);    // larger than staged: blocking copies
}

} // namespace opcheck
