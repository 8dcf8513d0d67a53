// Importance matrices: per weight matrix, the sums of squared activations that entered it
// (llama.cpp's imatrix). Read from and written to the GGUF form current llama.cpp writes
// (general.type = "imatrix", tensors <weight>.in_sum2 [n_cols, n_mat], <weight>.counts
// [1, n_mat], optionally <weight>.in_sum), and read from the legacy .dat form.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rf {

struct ImatrixEntry {
    int64_t n_cols = 0;         // activations per matrix: the weight's row length
    std::vector<float> sum2;    // [n_mat * n_cols] sums of x^2
    std::vector<float> sum;     // [n_mat * n_cols] sums of x (empty when the file has none)
    std::vector<float> counts;  // [n_mat] rows summed into each matrix
    int64_t n_mat() const { return int64_t(counts.size()); }
    // The quantizers' importance weights as llama-quantize derives them: sum2 / count per
    // matrix, 1 for a matrix that never saw input.
    std::vector<float> weights() const;
};

struct Imatrix {
    std::map<std::string, ImatrixEntry> entries; // by weight name, sorted as llama.cpp stores them
    std::vector<std::string> datasets;           // the text files it was computed on
    uint32_t chunk_count = 0;
    uint32_t chunk_size = 0;                     // tokens per chunk (0: unknown, legacy files)
};

// GGUF (by its magic) or legacy .dat. Throws rf::Error naming the file and the problem for
// anything malformed: truncated data, a sum without its count (or the reverse), shapes that
// do not match, non-f32 tensors, negative counts, non-finite values.
Imatrix read_imatrix(const std::string &path);
// The GGUF form (atomic: the file appears only once complete). Throws rf::Error.
void write_imatrix(const Imatrix &m, const std::string &path);

} // namespace rf
