#include "app/exec/interrupt.hpp"

#include <atomic>
#include <csignal>
#include <cstdlib>

namespace bs {
namespace {

std::atomic<int> g_signal{0};

extern "C" void on_signal(int sig) {
  if (g_signal.exchange(sig) != 0) {  // the second: end now
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool interrupted() { return g_signal.load() != 0; }

std::string interrupt_name() {
  const int s = g_signal.load();
  return s == SIGTERM ? "SIGTERM" : s == SIGINT ? "SIGINT" : s ? "signal " + std::to_string(s) : "";
}

void interrupt_point() {
  static const long after = [] {
    const char* e = std::getenv("BATCHSCOPE_INTERRUPT_AFTER");
    return e && *e ? std::atol(e) : 0L;
  }();
  static long passed = 0;
  if (after > 0 && ++passed == after && g_signal.load() == 0) g_signal = SIGINT;
}

}  // namespace bs
