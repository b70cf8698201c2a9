// stop_signal.cpp — the recording SIGINT / SIGTERM handler (see stop_signal.h).
#include "platform/stop_signal.h"

#include <csignal>
#include <cstring>

namespace diffscope {
namespace {

volatile std::sig_atomic_t g_signal = 0;
struct sigaction g_old_int, g_old_term;

extern "C" void on_stop_signal(int s) {
  if (g_signal != 0) {  // the second one: the default action (the user insists)
    std::signal(s, SIG_DFL);
    std::raise(s);
    return;
  }
  g_signal = s;
}

}  // namespace

Interrupted::Interrupted(int s, const std::string& written)
    : std::runtime_error(std::string("interrupted by ") + (s == SIGINT ? "SIGINT" : s == SIGTERM ? "SIGTERM" : "a signal") +
                         "; " + written),
      signo(s) {}

StopSignalScope::StopSignalScope() {
  g_signal = 0;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a write blocked on ffmpeg's pipe returns EINTR and the loop looks
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

StopSignalScope::~StopSignalScope() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

int stop_signal() { return g_signal; }

void throw_if_stopped() {
  if (g_signal != 0) throw Interrupted(g_signal);
}

}  // namespace diffscope
