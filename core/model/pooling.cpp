// Mean / first / last row pooling and L2 normalisation of hidden states.
#include "rocmforge/pooling.h"

#include <cmath>

#include "rocmforge/error.h"

namespace rf {

Pooling parse_pooling(const std::string &name) {
    if (name == "mean") return Pooling::Mean;
    if (name == "cls") return Pooling::Cls;
    if (name == "last") return Pooling::Last;
    throw UsageError("unknown pooling '" + name + "' (mean, cls or last)");
}

const char *pooling_name(Pooling p) {
    switch (p) {
    case Pooling::Mean: return "mean";
    case Pooling::Cls: return "cls";
    case Pooling::Last: return "last";
    }
    return "?";
}

bool pooling_reads_row(Pooling p, int64_t row, int64_t n_rows) {
    switch (p) {
    case Pooling::Mean: return true;
    case Pooling::Cls: return row == 0;
    case Pooling::Last: return row == n_rows - 1;
    }
    return false;
}

std::vector<float> pool_rows(const float *rows, int64_t n_rows, int64_t width, Pooling p) {
    if (n_rows <= 0) throw Error("pooling: no hidden states to pool");
    if (p != Pooling::Mean) return std::vector<float>(rows, rows + width); // the one row given
    std::vector<double> sum((size_t)width, 0.0);
    for (int64_t r = 0; r < n_rows; ++r)
        for (int64_t i = 0; i < width; ++i) sum[(size_t)i] += rows[r * width + i];
    std::vector<float> out((size_t)width);
    for (int64_t i = 0; i < width; ++i) out[(size_t)i] = (float)(sum[(size_t)i] / (double)n_rows);
    return out;
}

void l2_normalize(std::vector<float> &v) {
    double ss = 0.0;
    for (float x : v) ss += (double)x * x;
    if (ss <= 0.0) return;
    const double inv = 1.0 / std::sqrt(ss);
    for (float &x : v) x = (float)(x * inv);
}

} // namespace rf
