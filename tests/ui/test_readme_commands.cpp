// test_readme_commands.cpp — the README's command block runs as written, so it cannot drift: the
// block between the "readme-commands" markers is run line by line in one shell from the repository root, each
// `diffscope` line under a timeout. Expected: exit 0; a `--backend cuda` line exits 3 without a CUDA device
// (SEMANTICS §9); the desktop-app line gets `--frames 30` (a frame limit) and runs on the test's display (CI: Xvfb
// from scripts/test.sh), or exits 3 naming the headless alternatives when there is none.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gui_test_util.h"
#if defined(DIFFSCOPE_HAVE_CUDA)
#include "gpu/cuda_backend.h"
#endif

namespace diffscope {
namespace {

namespace fs = std::filesystem;

struct ReadmeBlock {
  std::vector<std::string> setup;     // lines that are not `diffscope ...` (PATH, cd), run as written
  std::vector<std::string> commands;  // `diffscope ...` lines, comments stripped
};

// "cmd args  # comment" -> "cmd args" (the README's comments follow two spaces).
std::string strip_comment(const std::string& line) {
  const size_t c = line.find("  #");
  std::string s = c == std::string::npos ? line : line.substr(0, c);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

ReadmeBlock readme_block() {
  std::ifstream f(test::repo_root() + "/README.md");
  ReadmeBlock b;
  bool in_markers = false, in_code = false;
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("<!-- readme-commands: begin", 0) == 0) in_markers = true;
    else if (line.rfind("<!-- readme-commands: end", 0) == 0) break;
    else if (in_markers && line.rfind("```", 0) == 0) in_code = !in_code;
    else if (in_code && !strip_comment(line).empty()) {
      const std::string cmd = strip_comment(line);
      (cmd.rfind("diffscope ", 0) == 0 || cmd == "diffscope" ? b.commands : b.setup).push_back(cmd);
    }
  }
  return b;
}

// The desktop app: `diffscope` with options only, or `diffscope gui` without --headless.
bool is_window_line(const std::string& cmd) {
  std::istringstream in(cmd);
  std::string prog, first;
  in >> prog >> first;
  return (first.empty() || first[0] == '-' || first == "gui") && cmd.find("--headless") == std::string::npos;
}

bool have_cuda_device() {
#if defined(DIFFSCOPE_HAVE_CUDA)
  return cuda_device_available();
#else
  return false;
#endif
}

TEST(ReadmeCommands, EveryLineOfTheCommandBlockRuns) {
  const ReadmeBlock block = readme_block();
  ASSERT_GE(block.commands.size(), 5u) << "README.md: no readme-commands block with diffscope lines";
  test::TempDir tmp;
  const std::string home = tmp.file("home");
  fs::create_directories(home);
  const bool display = std::getenv("DISPLAY") && *std::getenv("DISPLAY");

  // One shell: setup lines as written, then each command under a timeout with its output and status kept apart.
  // The binary under test goes first on PATH (the README's `export PATH` names build/bin).
  std::ostringstream sh;
  sh << "set -u\ncd '" << test::repo_root() << "'\n";
  for (const std::string& s : block.setup) sh << s << "\n";
  sh << "export PATH='" << fs::path(test::cli_binary()).parent_path().string() << "':\"$PATH\"\n";
  std::vector<int> expected;
  for (size_t i = 0; i < block.commands.size(); ++i) {
    std::string cmd = block.commands[i];
    if (is_window_line(cmd)) cmd += " --frames 30";
    const bool cuda = cmd.find("--backend cuda") != std::string::npos;
    expected.push_back((cuda && !have_cuda_device()) || (is_window_line(block.commands[i]) && !display) ? 3 : 0);
    sh << "{ timeout -k 10 300 " << cmd << " ; } >'" << tmp.file("out" + std::to_string(i)) << "' 2>&1\n";
    sh << "echo $? >'" << tmp.file("rc" + std::to_string(i)) << "'\n";
  }
  std::ofstream(tmp.file("readme.sh")) << sh.str();
  const std::string env = "HOME='" + home + "' XDG_CONFIG_HOME='" + home + "/.config' TMPDIR='" + tmp.path() + "'";
  const int status = std::system((env + " bash '" + tmp.file("readme.sh") + "' </dev/null").c_str());
  ASSERT_EQ(status, 0) << sh.str();

  for (size_t i = 0; i < block.commands.size(); ++i) {
    const std::string rc_text = guitest::slurp(tmp.file("rc" + std::to_string(i)));
    const std::string out = guitest::slurp(tmp.file("out" + std::to_string(i)));
    ASSERT_FALSE(rc_text.empty()) << block.commands[i] << ": did not run";
    const int rc = std::stoi(rc_text);
    EXPECT_EQ(rc, expected[i]) << "README line: " << block.commands[i] << "\n" << (rc == 124 ? "(timed out)\n" : "")
                               << out;
    if (expected[i] == 3 && rc == 3) {
      const bool says_why = out.find("CUDA") != std::string::npos || out.find("--headless") != std::string::npos;
      EXPECT_TRUE(says_why) << block.commands[i] << ": exit 3 without saying why:\n" << out;
    }
  }
}

}  // namespace
}  // namespace diffscope
