// The C boundary: every entry point runs its body through api_call(), which turns exceptions
// into a status and the thread-local message rocmforge_last_error() returns.
#pragma once
#include <cstring>
#include <string>

#include "rocmforge/rocmforge.h"

namespace rf::api {

// Records a failure on this thread and returns its status.
rocmforge_status fail(rocmforge_status status, const std::string &message);
void clear_error();

// ROCMFORGE_ERR_INVALID_ARGUMENT naming the parameter when p is null.
#define RF_API_REQUIRE(p)                                                                       \
    do {                                                                                        \
        if (!(p)) return ::rf::api::fail(ROCMFORGE_ERR_INVALID_ARGUMENT, std::string(__func__) + \
                                                                             ": " #p " is NULL"); \
    } while (0)

// Runs body (returning rocmforge_status) with the library's logger in place; any exception
// becomes a status: rf::UsageError -> INVALID_ARGUMENT, ContextFullError -> CONTEXT_FULL,
// OutOfMemoryError / std::bad_alloc -> OUT_OF_MEMORY, other rf::Error -> the status `on_error`.
template <class F>
rocmforge_status api_call(F &&body, rocmforge_status on_error = ROCMFORGE_ERR_INTERNAL);

// The integer a C caller stored in an enum-typed field or argument. C lets any int live there;
// loading a value outside the enumerators through the C++ enum type is undefined behaviour
// (UBSan: "not a valid value for type"), so the bytes are read as the int they are.
template <class E> int enum_value(const E &e) {
    static_assert(sizeof(E) == sizeof(int), "C enums are int-sized on the supported ABIs");
    int v;
    std::memcpy(&v, &e, sizeof v);
    return v;
}

// Copies text into buf (NUL-terminated) as the C API's string outputs do: *out_len gets the
// length; too small a buffer gives ROCMFORGE_ERR_BUFFER_TOO_SMALL (buf untouched).
rocmforge_status copy_out(const std::string &text, char *buf, size_t buf_size, size_t *out_len);

} // namespace rf::api

#include "api_status_impl.h"
