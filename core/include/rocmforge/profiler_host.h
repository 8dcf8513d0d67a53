// The core's side of the profiler plugin: loads it and installs it as a decorator in front of
// each backend's dispatch. Ops and backends never see it; when not loaded nothing runs.
#pragma once
#include <memory>
#include <string>

#include "rocmforge/abi.h"

namespace rf {

class Backend;

class Profiler {
public:
    Profiler(const rf_profiler_vtable *vt, void *ctx, std::shared_ptr<void> library);
    ~Profiler();
    void wrap(Backend &backend);
    void phase(const char *name);
    void report();

private:
    const rf_profiler_vtable *vt_;
    void *ctx_;
    std::shared_ptr<void> library_;
};

} // namespace rf
