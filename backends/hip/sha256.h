// SHA-256 (FIPS 180-4) for kernel-pack checksums and JIT cache keys; no external dependency.
#pragma once
#include <cstddef>
#include <string>

namespace rf_hip {
std::string sha256_hex(const void *data, size_t size);
}
