// test_outputs_cli.cpp — what the diffscope binary writes when it cannot finish well (SEMANTICS §9): a run that
// overflows, outputs that are one file, a trajectory that cannot be allocated: exit 2 or 3 and nothing written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_fixture.h"
#include "formats/npy.h"

namespace diffscope {
namespace {

namespace fs = std::filesystem;
using Result = test::CliResult;

class OutputsCli : public test::CliFixture {};

// Found by the public bug reports (tests/data/reported/).
// No non-finite output with exit 0: finite coefficients can still overflow during a run. An eps-network with
// weights of 1e30 (finite) gives eps = silu(1e30 silu(1e30 x)) = inf in float32 for x = 1.
TEST_F(OutputsCli, OverflowDuringTheRunIsRefusedAndNothingWritten) {
  test::TempDir in;
  test::StBuilder net;
  net.add_f32("eps_net.0.weight", {1, 2}, {1e30f, 0.f}).add_f32("eps_net.0.bias", {1}, {0.f})
      .add_f32("eps_net.2.weight", {1, 1}, {1e30f}).add_f32("eps_net.2.bias", {1}, {0.f})
      .add_f32("eps_net.4.weight", {1, 1}, {1.f}).add_f32("eps_net.4.bias", {1}, {0.f});
  test::write_bytes(in.file("big.safetensors"), net.build());
  write_npy_float(in.file("x.npy"), {2, 1}, std::vector<float>{-1.f, 1.f}.data(), "x");
  test::write_npy_i64(in.file("t.npy"), {3, 3});
  expect_refused("denoise --model '" + in.file("big.safetensors") + "' --x '" + in.file("x.npy") + "' --t-start '" +
                     in.file("t.npy") + "' --steps 1 --out '" + out("d.npy") + "' --trajectory '" + out("t.npy") + "'",
                 2, {"--out: row 1, column 0 = ", "is not finite", "nothing was written"});
  // mlp3: row 0 (x = 1) gives 1e30, row 1 (x = 1e30) gives 1e60 = inf in float32.
  test::StBuilder w;
  w.add_f32("fc1.weight", {1, 1}, {1e30f}).add_f32("fc2.weight", {1, 1}, {1.f}).add_f32("fc3.weight", {1, 1}, {1.f});
  test::write_bytes(in.file("w.safetensors"), w.build());
  write_npy_float(in.file("x.npy"), {2, 1}, std::vector<float>{1.f, 1e30f}.data(), "x");
  expect_refused("mlp3 --weights '" + in.file("w.safetensors") + "' --x '" + in.file("x.npy") + "' --out '" +
                     out("y.npy") + "'",
                 2, {"--out: row 1, column 0 = inf is not finite"});
}

// Found by the public bug reports (tests/data/reported/).
// output-collisions: one output used to overwrite another silently.
TEST_F(OutputsCli, CollidingOutputsRefusedBeforeAnyWork) {
  const std::string model = reported("huge-trajectory/zero_d1_h4.safetensors");
  const std::string in = " --x '" + reported("huge-trajectory/x1d1.npy") + "' --t-start '" +
                         reported("huge-trajectory/t5.npy") + "' --steps 6";
  expect_refused("denoise --model '" + model + "'" + in + " --out '" + out("a.npy") + "' --trajectory '" +
                     m_dir.path() + "/./a.npy'",
                 2, {"--out '" + out("a.npy") + "' and --trajectory", "are the same file"});
  // A symlink to an existing file and the file itself.
  test::TempDir other;
  test::write_bytes(other.file("real.npy"), "old");
  fs::create_symlink(other.file("real.npy"), out("link.npy"));
  const Result r = run("denoise --model '" + model + "'" + in + " --out '" + other.file("real.npy") +
                       "' --trajectory '" + out("link.npy") + "'");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "are the same file")) << r.err;
  EXPECT_EQ(slurp(other.file("real.npy")), "old");
  fs::remove(out("link.npy"));
#ifdef DIFFSCOPE_HAVE_GUI
  // The PNG's sidecar is a derived output: run.png writes run.json.
  const std::string s = "sample --model '" + model + "' --n 4 --steps 3 --t-start 5";
  expect_refused(s + " --out '" + out("run.json") + "' --png '" + out("run.png") + "'", 2,
                 {"--out '" + out("run.json") + "' and the sidecar of --png '" + out("run.json") + "'"});
  expect_refused(s + " --out '" + out("a.npy") + "' --png '" + out("a.npy") + "'", 2,
                 {"--out '" + out("a.npy") + "' and --png '" + out("a.npy") + "'"});
  expect_refused(s + " --out '" + out("x.npy") + "' --png '" + out("b.json") + "'", 2,
                 {"--png '" + out("b.json") + "' and the sidecar of --png"});
  expect_refused(s + " --out '" + out("x.npy") + "' --trajectory '" + out("x.json") + "' --png '" + out("x.png") + "'",
                 2, {"--trajectory '" + out("x.json") + "' and the sidecar of --png"});
#endif
}

// Found by the public bug reports (tests/data/reported/).
// huge-trajectory: S + 1 used to overflow int after 30 s and 9 GB, leaving --out behind. Under a 3 GB
// address-space limit the 8.6 GB trajectory is refused before any work (exit 3), fast, and nothing written.
TEST_F(OutputsCli, TrajectoryThatCannotBeAllocatedRefusedBeforeAnyWork) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "an ASan build cannot start under `ulimit -v` (its shadow memory reserves terabytes of address "
                  "space); the default build runs this test";
#endif
  const std::string args = "denoise --model '" + reported("huge-trajectory/zero_d1_h4.safetensors") + "' --x '" +
                           reported("huge-trajectory/x1d1.npy") + "' --t-start '" +
                           reported("huge-trajectory/t5.npy") + "' --steps 2147483647 --out '" + out("d.npy") +
                           "' --trajectory '" + out("dt.npy") + "'";
  const Result r = run(args, "ulimit -v 3000000;");
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_TRUE(has(r.err, "--trajectory")) << r.err;
  EXPECT_TRUE(has(r.err, "8.589")) << r.err;  // 2^31 frames x 4 bytes = 8.589934592 GB
  EXPECT_LT(r.seconds, 20.0);
  EXPECT_TRUE(m_dir.entries().empty());
}

}  // namespace
}  // namespace diffscope
