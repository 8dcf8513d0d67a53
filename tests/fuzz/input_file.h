// libFuzzer hands a target a buffer, while the GGUF reader maps a file by path: this puts the
// buffer in an in-memory file (memfd) and returns a path that opens it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace rf_fuzz {

// Replaces the file's contents with data[0, size) and returns its path (the same every call).
std::string input_file(const uint8_t *data, size_t size);

} // namespace rf_fuzz
