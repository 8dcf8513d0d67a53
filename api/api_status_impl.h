// api_call's body (a template: each entry point instantiates it with its own lambda).
#pragma once
#include <exception>
#include <new>

#include "rocmforge/error.h"
#include "rocmforge/kv_cache.h"
#include "rocmforge/log.h"
#include "rocmforge/session.h"

namespace rf::api {

template <class F>
rocmforge_status api_call(F &&body, rocmforge_status on_error) {
    try {
        ensure_logging();
        clear_error();
        return body();
    } catch (const ContextFullError &e) {
        return fail(ROCMFORGE_ERR_CONTEXT_FULL, e.what());
    } catch (const OutOfMemoryError &e) {
        return fail(ROCMFORGE_ERR_OUT_OF_MEMORY, e.what());
    } catch (const UsageError &e) {
        return fail(ROCMFORGE_ERR_INVALID_ARGUMENT, e.what());
    } catch (const Error &e) {
        return fail(on_error, e.what());
    } catch (const std::bad_alloc &) {
        return fail(ROCMFORGE_ERR_OUT_OF_MEMORY, "out of host memory");
    } catch (const std::exception &e) {
        return fail(ROCMFORGE_ERR_INTERNAL, e.what());
    } catch (...) {
        return fail(ROCMFORGE_ERR_INTERNAL, "unknown exception");
    }
}

} // namespace rf::api
