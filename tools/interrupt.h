// Ctrl-C as a request to stop: while an InterruptGuard lives, the first SIGINT only sets a flag
// the command polls between steps (so it can print what it did and exit 130); a second one
// kills the process as usual.
#pragma once

namespace rf {

constexpr int kExitInterrupted = 130; // 128 + SIGINT, as shells report it

class InterruptGuard {
public:
    InterruptGuard();  // installs the handler
    ~InterruptGuard(); // restores the previous one
    InterruptGuard(const InterruptGuard &) = delete;
    InterruptGuard &operator=(const InterruptGuard &) = delete;
    static bool requested();
};

} // namespace rf
