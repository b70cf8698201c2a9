// signal_run.h — runs the diffscope binary, sends it a signal after a delay (or once a file whose name holds `when_file`
// appears in `watch_dir`) and reports how it ended: the tests of SIGINT / SIGTERM handling (platform/stop_signal.h).
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_paths.h"

extern char** environ;

namespace diffscope::test {

struct SignalRun {
  int code = -1;        // exit status, or -1 when ended by a signal
  int killed_by = 0;    // the signal that ended it, if any
  std::string err;
  bool seen = false;    // the watched-for file appeared before the signal
};

// Starts diffscope with `args`; once an entry of `watch_dir` has `when_file` in its name (at once when `watch_dir` is
// ""; at most 60 s) waits `delay` and sends `signo`; then waits at most 60 s for the end. `seen`: the entry appeared.
inline SignalRun run_and_signal(const std::vector<std::string>& args, int signo, std::chrono::milliseconds delay,
                                const std::string& err_file, const std::string& watch_dir = "",
                                const std::string& when_file = "") {
  std::vector<std::string> all{test::cli_binary()};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  SignalRun r;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return r;
  int status = 0;
  bool exited = false;
  for (auto t = std::chrono::steady_clock::now(); !watch_dir.empty() && !r.seen;) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(watch_dir, ec))
      r.seen = r.seen || e.path().filename().string().find(when_file) != std::string::npos;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    if (std::chrono::steady_clock::now() - t > std::chrono::seconds(60)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!exited) {
    std::this_thread::sleep_for(delay);
    ::kill(pid, signo);
  }
  const auto t0 = std::chrono::steady_clock::now();
  while (!exited && ::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(60)) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.killed_by = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  std::ifstream f(err_file);
  std::stringstream s;
  s << f.rdbuf();
  r.err = s.str();
  return r;
}

}  // namespace diffscope::test
