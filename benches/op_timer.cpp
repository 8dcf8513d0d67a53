#include "op_timer.h"

#include <chrono>

#include "rocmforge/error.h"

namespace rfbench {

std::vector<double> time_node(rf::Backend &backend, rf_node &node, const TimerOptions &opt) {
    rf_node *ptr = &node;
    const rf_graph graph = {1, &ptr};
    const rf_backend_vtable *vt = backend.vtable();
    void *ctx = backend.context();
    const auto event_create = RF_SLOT(vt, rf_backend_vtable, event_create);
    const auto event_record = RF_SLOT(vt, rf_backend_vtable, event_record);
    const auto event_elapsed_ms = RF_SLOT(vt, rf_backend_vtable, event_elapsed_ms);
    const auto event_destroy = RF_SLOT(vt, rf_backend_vtable, event_destroy);
    const bool events = event_create && event_record && event_elapsed_ms && event_destroy;
    void *ev[2] = {nullptr, nullptr};
    if (events && (event_create(ctx, &ev[0]) != RF_OK || event_create(ctx, &ev[1]) != RF_OK))
        throw rf::Error("backend '" + backend.name() + "': cannot create timing events");

    for (int i = 0; i < opt.warmup; ++i) backend.compute(graph);
    backend.synchronize();
    std::vector<double> ms;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < opt.reps; ++i) {
        if (events) {
            event_record(ctx, ev[0]);
            backend.compute(graph);
            event_record(ctx, ev[1]);
            float t = 0;
            if (event_elapsed_ms(ctx, ev[0], ev[1], &t) != RF_OK)
                throw rf::Error("backend '" + backend.name() + "': reading a timing event failed");
            ms.push_back(double(t));
        } else {
            const auto t0 = std::chrono::steady_clock::now();
            backend.compute(graph);
            backend.synchronize();
            ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
        const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (i >= 2 && spent > opt.max_seconds) break;
    }
    if (events) {
        event_destroy(ctx, ev[0]);
        event_destroy(ctx, ev[1]);
    }
    return ms;
}

} // namespace rfbench
