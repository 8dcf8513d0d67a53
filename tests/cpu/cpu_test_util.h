// Shared helpers of the CPU backend tests: loads rocmforge-cpu.so the way the core does
// (dlopen + rocmforge_plugin_entry), host tensors, one-node graphs and error metrics.
#pragma once
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "rocmforge/abi.h"

namespace cputest {

// The plugin, loaded once per process from $RF_CPU_PLUGIN.
const rf_plugin_info &plugin();
const rf_backend_vtable &vtable();

// One backend instance (init/shutdown).
class Backend {
public:
    explicit Backend(const std::string &config_json);
    ~Backend();
    void *ctx() const { return ctx_; }
    std::string arch() const;
    // Runs one node; returns the status and fills *err.
    int run(rf_node &node, std::string *err = nullptr);
    int run_graph(std::vector<rf_node *> nodes, std::string *err = nullptr);
    bool supports(const rf_node &node) const;

private:
    void *ctx_ = nullptr;
};

// Backends to compare: the auto-detected level, scalar, and avx2 if the CPU has a higher level.
std::vector<std::string> simd_configs();
// One backend of each of simd_configs(), in that order.
std::vector<std::unique_ptr<Backend>> all_backends();

// A host tensor with its own storage (contiguous, ne order).
struct Tensor {
    rf_tensor t{};
    std::vector<uint8_t> storage;
    Tensor(int type, std::vector<int64_t> ne);
    float *f32() { return reinterpret_cast<float *>(t.data); }
    int32_t *i32() { return reinterpret_cast<int32_t *>(t.data); }
    int64_t n() const { return t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3]; }
    std::vector<float> as_floats() const; // f32 data copied out
};

std::mt19937 &rng();          // seeded once per run (seed printed, $RF_TEST_SEED overrides)
void fill_normal(float *x, int64_t n, float stddev = 1.f);
rf_node make_node(int op, Tensor &dst, std::initializer_list<Tensor *> srcs);
// Runs node on be, REQUIREing that be supports it and that it succeeds (its error shown if not).
void run_ok(Backend &be, rf_node &node);

double nmse(const std::vector<double> &ref, const float *got, int64_t n);
bool all_finite(const float *x, int64_t n);

} // namespace cputest
