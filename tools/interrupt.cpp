#include "interrupt.h"

#include <csignal>

namespace rf {
namespace {

volatile std::sig_atomic_t g_requested = 0;
struct sigaction g_previous {};

void on_sigint(int) { g_requested = 1; }

} // namespace

InterruptGuard::InterruptGuard() {
    g_requested = 0;
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND; // the second Ctrl-C takes the default action
    sigaction(SIGINT, &sa, &g_previous);
}

InterruptGuard::~InterruptGuard() { sigaction(SIGINT, &g_previous, nullptr); }

bool InterruptGuard::requested() { return g_requested != 0; }

} // namespace rf
