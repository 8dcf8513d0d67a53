#include "cpu_test_util.h"

#include <dlfcn.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "rocmforge/types.h"

namespace cputest {

const rf_plugin_info &plugin() {
    static const rf_plugin_info *info = [] {
        const char *path = std::getenv("RF_CPU_PLUGIN");
        if (!path) throw std::runtime_error("RF_CPU_PLUGIN is not set (path of rocmforge-cpu.so)");
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) throw std::runtime_error(std::string("dlopen failed: ") + dlerror());
        auto entry = reinterpret_cast<rf_plugin_entry_fn>(dlsym(h, RF_PLUGIN_ENTRY_SYMBOL));
        if (!entry) throw std::runtime_error("rocmforge_plugin_entry not exported");
        return entry();
    }();
    return *info;
}

const rf_backend_vtable &vtable() { return *static_cast<const rf_backend_vtable *>(plugin().vtable); }

Backend::Backend(const std::string &config_json) {
    char err[512] = {};
    if (vtable().init(config_json.c_str(), &ctx_, err, sizeof err) != RF_OK)
        throw std::runtime_error("init failed: " + std::string(err));
}
Backend::~Backend() { vtable().shutdown(ctx_); }

std::string Backend::arch() const {
    rf_device_info info{};
    vtable().device_info(ctx_, &info);
    return info.arch;
}

int Backend::run(rf_node &node, std::string *err) { return run_graph({&node}, err); }

int Backend::run_graph(std::vector<rf_node *> nodes, std::string *err) {
    rf_graph g{int32_t(nodes.size()), nodes.data()};
    char buf[1024] = {};
    const int rc = vtable().compute(ctx_, &g, buf, sizeof buf);
    if (err) *err = buf;
    return rc;
}

bool Backend::supports(const rf_node &node) const { return vtable().supports_op(ctx_, &node) == 1; }

std::vector<std::string> simd_configs() {
    std::vector<std::string> out = {R"({"n_threads": 2})", R"({"n_threads": 3, "simd": "scalar"})"};
    Backend probe(R"({"n_threads": 1})");
    if (probe.arch() == "x86_64-avx512vnni") out.push_back(R"({"n_threads": 2, "simd": "avx2"})");
    return out;
}

std::vector<std::unique_ptr<Backend>> all_backends() {
    std::vector<std::unique_ptr<Backend>> out;
    for (const auto &cfg : simd_configs()) out.push_back(std::make_unique<Backend>(cfg));
    return out;
}

Tensor::Tensor(int type, std::vector<int64_t> ne) {
    t.type = type;
    for (int i = 0; i < RF_MAX_DIMS; ++i) t.ne[i] = i < int(ne.size()) ? ne[size_t(i)] : 1;
    const rf::TypeTraits *tt = rf::type_traits(type);
    t.nb[0] = int64_t(tt->type_size);
    t.nb[1] = int64_t(rf::row_size(type, t.ne[0]));
    t.nb[2] = t.nb[1] * t.ne[1];
    t.nb[3] = t.nb[2] * t.ne[2];
    storage.assign(size_t(t.nb[3] * t.ne[3]) + 64, 0);
    t.data = storage.data();
}

std::vector<float> Tensor::as_floats() const {
    const auto *p = reinterpret_cast<const float *>(t.data);
    return std::vector<float>(p, p + n());
}

std::mt19937 &rng() {
    static std::mt19937 gen = [] {
        unsigned seed = std::random_device{}();
        if (const char *s = std::getenv("RF_TEST_SEED")) seed = unsigned(std::strtoul(s, nullptr, 10));
        std::printf("cpu tests: seed %u (set RF_TEST_SEED to reproduce)\n", seed);
        return std::mt19937(seed);
    }();
    return gen;
}

void fill_normal(float *x, int64_t n, float stddev) {
    std::normal_distribution<float> dist(0.f, stddev);
    for (int64_t i = 0; i < n; ++i) x[i] = dist(rng());
}

rf_node make_node(int op, Tensor &dst, std::initializer_list<Tensor *> srcs) {
    rf_node n{};
    n.op = op;
    n.dst = &dst.t;
    int i = 0;
    for (Tensor *s : srcs) n.src[i++] = s ? &s->t : nullptr;
    return n;
}

void run_ok(Backend &be, rf_node &node) {
    REQUIRE(be.supports(node));
    std::string err;
    const int rc = be.run(node, &err);
    INFO(err);
    REQUIRE(rc == RF_OK);
}

double nmse(const std::vector<double> &ref, const float *got, int64_t n) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; ++i) {
        const double d = double(got[i]) - ref[size_t(i)];
        num += d * d;
        den += ref[size_t(i)] * ref[size_t(i)];
    }
    if (!std::isfinite(num)) return INFINITY;
    return den > 0 ? num / den : num;
}

bool all_finite(const float *x, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
        if (!std::isfinite(x[i])) return false;
    return true;
}

} // namespace cputest
