// Pooling a sequence's per-token hidden states into one vector (an embedding): the mean of the
// rows, the first row (cls) or the last; and L2 normalisation, as OpenAI's embeddings are.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace rf {

enum class Pooling { Mean, Cls, Last };

// "mean", "cls" or "last"; throws UsageError naming the accepted values otherwise.
Pooling parse_pooling(const std::string &name);
const char *pooling_name(Pooling p);

// Which rows a pooling reads, of a sequence of n rows: all of them (mean) or just one.
bool pooling_reads_row(Pooling p, int64_t row, int64_t n_rows);

// rows: n_rows rows of width floats each, row by row, exactly those pooling_reads_row() picks
// in ascending order (all n_rows for mean; the one row for cls / last). The mean is summed in
// double. Throws rf::Error when there are no rows.
std::vector<float> pool_rows(const float *rows, int64_t n_rows, int64_t width, Pooling p);

// v / |v| (the sum of squares in double); a zero vector is left as it is.
void l2_normalize(std::vector<float> &v);

} // namespace rf
