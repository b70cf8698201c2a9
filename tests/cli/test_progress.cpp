// test_progress.cpp — cli_util.h's Progress: the time left (ETA) of long work on stderr, rewritten in place on a
// terminal only after a second, whole lines every 5 s in a log or pipe (never a carriage return there), nothing for
// short work; and the commands that use it (sample, bench) under a pseudo-terminal.
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli/cli_util.h"
#include "io_test_util.h"
#include "test_paths.h"

namespace diffscope::cli {
namespace {

using Clock = Progress::Clock;

// A Progress printing into a string with a clock the test moves.
struct Captured {
  char* buf = nullptr;
  size_t size = 0;
  std::FILE* f = open_memstream(&buf, &size);
  Clock::time_point t0 = Clock::now(), now = t0;
  ~Captured() {
    std::fclose(f);
    std::free(buf);
  }
  void at(double s) { now = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); }
  std::string text() {
    std::fflush(f);
    return std::string(buf, size);
  }
};

TEST(Progress, TerminalLineAfterOneSecondWithTheTimeLeftThenCleared) {
  Captured c;
  {
    Progress p("sample steps", 100, c.f, true, [&] { return c.now; });
    c.at(0.5);
    p.update(10);
    EXPECT_EQ(c.text(), "");  // short work prints nothing
    c.at(2.0);
    p.update(40);  // 40 in 2 s: 60 more take 3 s
    EXPECT_EQ(c.text(), "\r\033[Ksample steps: 40/100 (40%), 2.0 s, ETA 3.0 s");
    c.at(2.05);
    p.update(41);  // at most ten lines a second
    EXPECT_EQ(c.text().size(), std::string("\r\033[Ksample steps: 40/100 (40%), 2.0 s, ETA 3.0 s").size());
  }
  const std::string t = c.text();
  EXPECT_EQ(t.substr(t.size() - 4), "\r\033[K");  // cleared: the command's last line says the whole time
}

TEST(Progress, LogLinesEveryFiveSecondsWithoutCarriageReturns) {
  Captured c;
  {
    Progress p("bench CPU workloads", 10, c.f, false, [&] { return c.now; });
    c.at(4.9);
    p.update(5);
    c.at(5.0);
    p.update(4);  // 4 of 10 in 5 s: 7.5 s left
    c.at(9.0);
    p.update(6);
    c.at(10.0);
    p.update(8);  // 8 of 10 in 10 s: 2.5 s left
    c.at(20.0);
    p.update(10);  // done: the command's own line says it
  }
  EXPECT_EQ(c.text(), "bench CPU workloads: 4/10 (40%), 5.0 s, ETA 7.5 s\n"
                      "bench CPU workloads: 8/10 (80%), 10 s, ETA 2.5 s\n");
}

TEST(Progress, DurationText) {
  EXPECT_EQ(duration_text(0.04), "0.0 s");
  EXPECT_EQ(duration_text(1.25), "1.2 s");
  EXPECT_EQ(duration_text(16.4), "16 s");
  EXPECT_EQ(duration_text(125), "2 min 05 s");
  EXPECT_EQ(duration_text(3725), "1 h 02 min");
}

// `diffscope ARGS` with stderr (and stdout) on a pseudo-terminal: everything it printed, and its wall time.
struct TerminalRun {
  std::string out;
  double seconds = 0;
};
TerminalRun run_on_terminal(const std::string& args) {
  const auto t0 = std::chrono::steady_clock::now();
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    const std::string cmd = "exec '" + test::cli_binary() + "' " + args;
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  TerminalRun r;
  char buf[4096];
  for (ssize_t n; (n = ::read(master, buf, sizeof buf)) > 0;) r.out.append(buf, size_t(n));
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// Work that took well over a second shows `label: done/total (p%), elapsed, ETA left`; work under a second shows
// nothing but the command's own lines (how long a run takes depends on the machine: both are checked as they come).
void expect_progress(const TerminalRun& r, const std::string& label) {
  if (r.seconds >= 1.5) {
    EXPECT_NE(r.out.find(label + ": "), std::string::npos) << r.seconds << " s: " << r.out;
    EXPECT_NE(r.out.find(", ETA "), std::string::npos) << r.out;
  } else if (r.seconds < 0.9) {
    EXPECT_EQ(r.out.find(label), std::string::npos) << r.seconds << " s: " << r.out;
  }
}

TEST(Progress, SampleShowsItsStepsWithTheTimeLeftOnATerminal) {
  test::TempDir dir;
  const TerminalRun r = run_on_terminal("sample --backend cpu --model '" + test::data_path("golden/d2_h256.safetensors") +
                                        "' --n 8192 --steps 100 --t-start 999 --out '" + dir.file("x.npy") + "'");
  EXPECT_NE(r.out.find("wrote " + dir.file("x.npy")), std::string::npos) << r.out;
  expect_progress(r, "sample steps");
  // A short run prints its final line only.
  const TerminalRun quick = run_on_terminal("sample --backend cpu --model '" + test::data_path("golden/d2_h256.safetensors") +
                                            "' --n 8 --steps 2 --out '" + dir.file("y.npy") + "'");
  expect_progress(quick, "sample steps");
}

TEST(Progress, BenchShowsItsWorkloadsWithTheTimeLeftOnATerminal) {
  expect_progress(run_on_terminal("bench --quick"), "bench CPU workloads");
}

}  // namespace
}  // namespace diffscope::cli
