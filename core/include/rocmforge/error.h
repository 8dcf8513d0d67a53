// Error type used across the core: carries the process exit code the CLI should return.
#pragma once
#include <stdexcept>
#include <string>

namespace rf {

// Exit codes: 1 = bad input data (malformed file, runtime failure), 2 = bad usage/config.
enum ExitCode : int { kExitData = 1, kExitUsage = 2 };

class Error : public std::runtime_error {
public:
    explicit Error(const std::string &msg, int exit_code = kExitData)
        : std::runtime_error(msg), exit_code_(exit_code) {}
    int exit_code() const { return exit_code_; }

private:
    int exit_code_;
};

// Thrown for bad command lines and configs (exit code 2).
class UsageError : public Error {
public:
    explicit UsageError(const std::string &msg) : Error(msg, kExitUsage) {}
};

} // namespace rf
