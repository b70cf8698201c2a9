// cli_fixture.h — a GoogleTest fixture that runs the diffscope binary (DIFFSCOPE_BIN) in a shell and checks what
// a refused command leaves: its exit code, the parts its message names, and an empty output folder (SEMANTICS §9).
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io_test_util.h"
#include "test_paths.h"

namespace diffscope::test {

// One run of the binary: exit code (-1 when it did not exit), stdout, stderr, wall time.
struct CliResult {
  int code = -1;
  std::string out, err;
  double seconds = 0;
};

class CliFixture : public ::testing::Test {
 protected:
  TempDir m_dir, m_logs;

  static std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }
  static bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
  // A file of tests/data/reported/ (inputs from public bug reports; README there).
  static std::string reported(const std::string& rel) { return data_path("reported/" + rel); }

  // Runs `diffscope <args>` (args shell-quoted by the caller); `prefix` runs first in the same shell.
  CliResult run(const std::string& args, const std::string& prefix = "") {
    CliResult r;
    const std::string o = m_logs.file("stdout"), e = m_logs.file("stderr");
    const std::string cmd = prefix + " '" + cli_binary() + "' " + args + " >'" + o + "' 2>'" + e + "' </dev/null";
    const auto t0 = std::chrono::steady_clock::now();
    const int status = std::system(cmd.c_str());
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(o);
    r.err = slurp(e);
    return r;
  }
  // A path in the output folder.
  std::string out(const std::string& name) const { return m_dir.file(name); }
  // Exit `code`, every `parts` in the message, and the output folder empty.
  void expect_refused(const std::string& args, int code, const std::vector<std::string>& parts) {
    SCOPED_TRACE(args);
    const CliResult r = run(args);
    EXPECT_EQ(r.code, code) << r.err;
    for (const std::string& p : parts) EXPECT_TRUE(has(r.err, p)) << "missing '" << p << "' in: " << r.err;
    EXPECT_TRUE(m_dir.entries().empty()) << "something was written";
  }
};

}  // namespace diffscope::test
