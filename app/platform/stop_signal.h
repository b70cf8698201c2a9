// stop_signal.h — SIGINT / SIGTERM for the long loops outside the window (`sample`, `gui --headless`): a handler
// that only records the signal, and checks the loops call, which throw Interrupted so that normal unwinding removes
// temporary files and reaps ffmpeg (formats/video_writer.h). The CLI exits 128 + the signal: 130 for SIGINT, 143 for
// SIGTERM (SEMANTICS §9). A second signal while the first is being handled ends the process at once.
#pragma once
#include <stdexcept>
#include <string>

namespace diffscope {

// Thrown by throw_if_stopped(); `signo` is the signal received. `written` ends the message: what the command left
// ("nothing was written"; `train` names the files of its last complete step, SEMANTICS §11).
struct Interrupted : std::runtime_error {
  explicit Interrupted(int s, const std::string& written = "nothing was written");
  int signo;
};

// Installs the recording handler for SIGINT and SIGTERM (no SA_RESTART: a blocked write returns EINTR) while it
// lives and puts back the previous handlers after. One at a time.
class StopSignalScope {
 public:
  StopSignalScope();
  ~StopSignalScope();
  StopSignalScope(const StopSignalScope&) = delete;
  StopSignalScope& operator=(const StopSignalScope&) = delete;
};

// The signal received since a StopSignalScope was made (0: none).
int stop_signal();
// Throws Interrupted when a signal was received.
void throw_if_stopped();

}  // namespace diffscope
