// The one logger: a spdlog sink that hands each formatted message to the embedding program's
// callback, or prints "[level] text" to stderr when there is none.
#include "rocmforge/log.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include <spdlog/sinks/base_sink.h>

namespace rf {
namespace {

LogLevel to_log_level(spdlog::level::level_enum l) {
    if (l <= spdlog::level::debug) return LogLevel::Debug;
    if (l == spdlog::level::info) return LogLevel::Info;
    if (l == spdlog::level::warn) return LogLevel::Warn;
    return LogLevel::Error;
}

// base_sink's mutex serialises sink_it_, so the callback never changes while it runs.
class CallbackSink : public spdlog::sinks::base_sink<std::mutex> {
public:
    void set(LogSink sink) {
        std::lock_guard<std::mutex> lock(mutex_);
        sink_ = std::move(sink);
    }

protected:
    void sink_it_(const spdlog::details::log_msg &msg) override {
        const std::string text(msg.payload.data(), msg.payload.size());
        if (sink_) {
            sink_(to_log_level(msg.level), text.c_str());
            return;
        }
        const auto name = spdlog::level::to_string_view(msg.level);
        std::fprintf(stderr, "[%.*s] %s\n", (int)name.size(), name.data(), text.c_str());
    }
    void flush_() override { std::fflush(stderr); }

private:
    LogSink sink_;
};

std::shared_ptr<CallbackSink> &the_sink() {
    static std::shared_ptr<CallbackSink> sink;
    return sink;
}

void install_logger(spdlog::level::level_enum level) {
    static std::once_flag once;
    std::call_once(once, [] {
        the_sink() = std::make_shared<CallbackSink>();
        auto logger = std::make_shared<spdlog::logger>("rocmforge", the_sink());
        logger->set_level(spdlog::level::warn);
        spdlog::set_default_logger(logger);
    });
    spdlog::set_level(level);
}

spdlog::level::level_enum env_level(spdlog::level::level_enum fallback) {
    const char *env = std::getenv("ROCMFORGE_LOG");
    return env ? spdlog::level::from_str(env) : fallback;
}

} // namespace

void init_logging(int verbosity) {
    const auto level = verbosity >= 2 ? spdlog::level::debug
                       : verbosity == 1 ? spdlog::level::info
                                        : spdlog::level::warn;
    install_logger(env_level(level));
}

void ensure_logging() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (!the_sink()) install_logger(env_level(spdlog::level::warn));
    });
}

void set_log_sink(LogSink sink) {
    ensure_logging();
    the_sink()->set(std::move(sink));
}

void set_log_level(LogLevel min_level) {
    ensure_logging();
    static const spdlog::level::level_enum kLevels[] = {spdlog::level::debug, spdlog::level::info,
                                                        spdlog::level::warn, spdlog::level::err};
    spdlog::set_level(kLevels[(int)min_level]);
}

} // namespace rf
