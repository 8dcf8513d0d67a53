// Thread-local error messages and the status names.
#include "api_status.h"

#include <cstring>

#include "rocmforge/log.h"

namespace rf::api {

static thread_local std::string t_last_error;

rocmforge_status fail(rocmforge_status status, const std::string &message) {
    t_last_error = message;
    return status;
}

void clear_error() { t_last_error.clear(); }

rocmforge_status copy_out(const std::string &text, char *buf, size_t buf_size, size_t *out_len) {
    if (out_len) *out_len = text.size();
    if (!buf || buf_size < text.size() + 1)
        return fail(ROCMFORGE_ERR_BUFFER_TOO_SMALL, "the output needs " + std::to_string(text.size() + 1) +
                                                        " bytes, the buffer has " + std::to_string(buf ? buf_size : 0));
    std::memcpy(buf, text.data(), text.size());
    buf[text.size()] = '\0';
    return ROCMFORGE_OK;
}

} // namespace rf::api

extern "C" {

const char *rocmforge_last_error(void) { return rf::api::t_last_error.c_str(); }

const char *rocmforge_status_name(rocmforge_status status) {
    switch (status) {
    case ROCMFORGE_OK: return "ok";
    case ROCMFORGE_ERR_INVALID_ARGUMENT: return "invalid argument";
    case ROCMFORGE_ERR_FILE: return "file error";
    case ROCMFORGE_ERR_UNSUPPORTED: return "unsupported";
    case ROCMFORGE_ERR_BACKEND: return "backend error";
    case ROCMFORGE_ERR_OUT_OF_MEMORY: return "out of memory";
    case ROCMFORGE_ERR_CONTEXT_FULL: return "context full";
    case ROCMFORGE_ERR_BUFFER_TOO_SMALL: return "buffer too small";
    case ROCMFORGE_ERR_CANCELLED: return "cancelled";
    case ROCMFORGE_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

const char *rocmforge_version(void) { return ROCMFORGE_VERSION_STRING; }

uint32_t rocmforge_api_version(void) { return (ROCMFORGE_API_VERSION_MAJOR << 16) | ROCMFORGE_API_VERSION_MINOR; }

void rocmforge_log_set(rocmforge_log_callback callback, void *user_data) {
    static_assert((int)ROCMFORGE_LOG_ERROR == (int)rf::LogLevel::Error, "the C levels are rf::LogLevel's");
    if (!callback) {
        rf::set_log_sink(nullptr);
        return;
    }
    rf::set_log_sink([callback, user_data](rf::LogLevel level, const char *text) {
        callback((rocmforge_log_level)level, text, user_data);
    });
}

void rocmforge_log_set_level(rocmforge_log_level min_level) {
    const int level = rf::api::enum_value(min_level);
    if (level < ROCMFORGE_LOG_DEBUG || level > ROCMFORGE_LOG_ERROR) return;
    rf::set_log_level((rf::LogLevel)level);
}

} // extern "C"
