// test_sample_video.cpp — `diffscope sample ... --video run.mp4|.gif|.webp`: the video holds one
// frame per kept trajectory frame at the asked size (ffprobe; for WebP the RIFF chunks counted by hand from the
// WebP container spec); the first and last frames decoded back by ffmpeg equal the PNGs of the same frames
// exactly with a lossless setting (libx264rgb -qp 0) and within PSNR >= 35 dB (luma) with the defaults. Without
// ffmpeg: tests/picture/test_stop_signal_video.cpp (exit 3 before any work).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "gui_test_util.h"

namespace diffscope {
namespace {

namespace fs = std::filesystem;

constexpr int kFrames = 21;  // --steps 20 with --trajectory-stride 1 keeps frames 0..20

bool have_ffmpeg() { return std::system("ffmpeg -version >/dev/null 2>&1 && ffprobe -version >/dev/null 2>&1") == 0; }

std::string run_args(const test::TempDir& dir, const std::string& more) {
  return "sample --backend cpu --model '" + guitest::model_2d() + "' --n 800 --steps 20 --t-start 600 --seed 5 --out '" +
         dir.file("x.npy") + "' " + more;
}

struct Probe {
  int frames = -1, w = -1, h = -1;
};

// Counts the decoded frames of the first video stream with ffprobe.
Probe probe(const std::string& path, const std::string& logs) {
  const std::string out = logs + "/probe.csv";
  const std::string cmd = "ffprobe -v error -select_streams v:0 -count_frames -show_entries "
                          "stream=width,height,nb_read_frames -of csv=p=0 '" + path + "' >'" + out + "' 2>&1";
  Probe p;
  if (std::system(cmd.c_str()) != 0) return p;
  std::sscanf(guitest::slurp(out).c_str(), "%d,%d,%d", &p.w, &p.h, &p.frames);
  return p;
}

// The pixel format of the first video stream, by ffprobe ("yuv444p", ...; "" when it cannot tell).
std::string pix_fmt(const std::string& path, const std::string& logs) {
  const std::string out = logs + "/pix_fmt.txt";
  const std::string cmd = "ffprobe -v error -select_streams v:0 -show_entries stream=pix_fmt -of csv=p=0 '" + path +
                          "' >'" + out + "' 2>&1";
  if (std::system(cmd.c_str()) != 0) return "";
  std::string s = guitest::slurp(out);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

// Every frame of `path` decoded by ffmpeg as packed RGB (w*h*3 bytes each).
std::vector<std::vector<unsigned char>> decode_rgb(const std::string& path, int w, int h, const std::string& logs) {
  const std::string raw = logs + "/frames.rgb";
  const std::string cmd = "ffmpeg -v error -y -i '" + path + "' -f rawvideo -pix_fmt rgb24 '" + raw + "'";
  std::vector<std::vector<unsigned char>> frames;
  if (std::system(cmd.c_str()) != 0) return frames;
  std::ifstream f(raw, std::ios::binary);
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(f)), {});
  const size_t fb = size_t(w) * h * 3;
  for (size_t o = 0; o + fb <= bytes.size(); o += fb) frames.emplace_back(bytes.begin() + o, bytes.begin() + o + fb);
  return frames;
}

// PSNR in dB over all channels: 10 log10(255^2 / MSE).
double psnr(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b) {
  double se = 0;
  for (size_t i = 0; i < a.size(); ++i) se += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
  const double mse = se / double(a.size());
  return mse == 0 ? INFINITY : 10 * std::log10(255.0 * 255.0 / mse);
}

// PSNR in dB of the luma Y' = 0.299 R + 0.587 G + 0.114 B (ITU-R BT.601), the usual video-coding measure.
double psnr_luma(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b) {
  double se = 0;
  for (size_t i = 0; i + 2 < a.size(); i += 3) {
    const double ya = 0.299 * a[i] + 0.587 * a[i + 1] + 0.114 * a[i + 2];
    const double yb = 0.299 * b[i] + 0.587 * b[i + 1] + 0.114 * b[i + 2];
    se += (ya - yb) * (ya - yb);
  }
  const double mse = se / double(a.size() / 3);
  return mse == 0 ? INFINITY : 10 * std::log10(255.0 * 255.0 / mse);
}

TEST(SampleVideo, LosslessMp4FramesEqualThePngsAndDefaultsAreWithin35dB) {
  if (!have_ffmpeg()) GTEST_SKIP() << "ffmpeg/ffprobe not installed (scripts/install-deps.sh installs them)";
  test::TempDir dir, logs;
  // The first frame as --png draws it (--frame 0); the last comes with the lossless run's --png.
  guitest::Result r = guitest::run_cli(run_args(dir, "--size 320x240 --frame 0 --png '" + dir.file("first.png") + "'"),
                                       logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  r = guitest::run_cli(run_args(dir, "--video '" + dir.file("exact.mp4") +
                                                         "' --video-lossless --fps 12 --size 320x240 --png '" +
                                                         dir.file("p.png") + "'"),
                                       logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  r = guitest::run_cli(run_args(dir, "--video '" + dir.file("default.mp4") + "' --size 320x240"), logs.path());
  ASSERT_EQ(r.code, 0) << r.err;

  const guitest::Png png_first = guitest::read_png(dir.file("first.png"));
  const guitest::Png png_last = guitest::read_png(dir.file("p.png"));
  ASSERT_EQ(png_first.rgb.size(), size_t(320) * 240 * 3);
  ASSERT_EQ(png_last.rgb.size(), size_t(320) * 240 * 3);
  EXPECT_NE(png_first.rgb, png_last.rgb);  // noise at t_start, samples at the end

  for (const char* name : {"exact.mp4", "default.mp4"}) {
    const Probe p = probe(dir.file(name), logs.path());
    EXPECT_EQ(p.frames, kFrames) << name;
    EXPECT_EQ(p.w, 320) << name;
    EXPECT_EQ(p.h, 240) << name;
  }
  const auto exact = decode_rgb(dir.file("exact.mp4"), 320, 240, logs.path());
  ASSERT_EQ(int(exact.size()), kFrames);
  EXPECT_TRUE(exact.front() == png_first.rgb) << "PSNR " << psnr(exact.front(), png_first.rgb);
  EXPECT_TRUE(exact.back() == png_last.rgb) << "PSNR " << psnr(exact.back(), png_last.rgb);

  const auto lossy = decode_rgb(dir.file("default.mp4"), 320, 240, logs.path());
  ASSERT_EQ(int(lossy.size()), kFrames);
  // The default is H.264 yuv444p (High 4:4:4, CRF 18): full-resolution colour, so the 3-pixel points keep
  // theirs and 35 dB holds on RGB. yuv420p (--video-yuv420, plays in every player) cannot hold the
  // colour of 3-pixel points in its 2x2 chroma: even at -crf 0 its RGB PSNR here is 31.4 dB, so for it 35 dB is
  // asked of the luma, the usual video-coding measure (measured 40.2-42.7 dB), and 30 dB of RGB (31.7-32.0).
  EXPECT_GE(psnr(lossy.front(), png_first.rgb), 35.0);
  EXPECT_GE(psnr(lossy.back(), png_last.rgb), 35.0);
  EXPECT_LT(psnr(lossy.back(), png_last.rgb), INFINITY);  // the default is lossy: not the exact setting
  EXPECT_EQ(pix_fmt(dir.file("default.mp4"), logs.path()), "yuv444p");

  r = guitest::run_cli(run_args(dir, "--video '" + dir.file("compat.mp4") + "' --video-yuv420 --size 320x240"), logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(pix_fmt(dir.file("compat.mp4"), logs.path()), "yuv420p");
  const auto compat = decode_rgb(dir.file("compat.mp4"), 320, 240, logs.path());
  ASSERT_EQ(int(compat.size()), kFrames);
  std::printf("default MP4 (yuv444p): PSNR RGB %.2f / %.2f dB; yuv420p: RGB %.2f / %.2f dB, luma %.2f / %.2f dB\n",
              psnr(lossy.front(), png_first.rgb), psnr(lossy.back(), png_last.rgb), psnr(compat.front(), png_first.rgb),
              psnr(compat.back(), png_last.rgb), psnr_luma(compat.front(), png_first.rgb),
              psnr_luma(compat.back(), png_last.rgb));
  EXPECT_GE(psnr_luma(compat.front(), png_first.rgb), 35.0);
  EXPECT_GE(psnr_luma(compat.back(), png_last.rgb), 35.0);
  EXPECT_GE(psnr(compat.front(), png_first.rgb), 30.0);
  EXPECT_GE(psnr(compat.back(), png_last.rgb), 30.0);

  const auto j = nlohmann::json::parse(guitest::slurp(dir.file("exact.mp4.json")));
  EXPECT_EQ(j["frames"].size(), size_t(kFrames));
  EXPECT_EQ(j["fps"].get<double>(), 12.0);
  EXPECT_EQ(j["video"], "exact.mp4");
}

// WebP container (RFC 9649 / Google's "WebP Container Specification"): "RIFF" size "WEBP", then chunks of
// FourCC + little-endian size + payload padded to even; VP8X holds canvas width-1 and height-1 (24 bits each
// at payload bytes 4 and 7); an animation has one ANMF chunk per frame.
struct WebpInfo {
  int frames = 0, w = 0, h = 0;
};
WebpInfo read_webp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<unsigned char> b((std::istreambuf_iterator<char>(f)), {});
  WebpInfo info;
  if (b.size() < 12 || std::string(b.begin(), b.begin() + 4) != "RIFF" || std::string(b.begin() + 8, b.begin() + 12) != "WEBP")
    return info;
  auto u24 = [&](size_t o) { return int(b[o] | b[o + 1] << 8 | b[o + 2] << 16); };
  for (size_t o = 12; o + 8 <= b.size();) {
    const std::string cc(b.begin() + o, b.begin() + o + 4);
    const size_t size = size_t(b[o + 4]) | size_t(b[o + 5]) << 8 | size_t(b[o + 6]) << 16 | size_t(b[o + 7]) << 24;
    if (cc == "VP8X" && o + 18 <= b.size()) info.w = u24(o + 12) + 1, info.h = u24(o + 15) + 1;
    if (cc == "ANMF") ++info.frames;
    o += 8 + size + (size & 1);
  }
  return info;
}

TEST(SampleVideo, GifAndWebpHoldEveryFrameAtTheAskedSize) {
  if (!have_ffmpeg()) GTEST_SKIP() << "ffmpeg/ffprobe not installed (scripts/install-deps.sh installs them)";
  test::TempDir dir, logs;
  guitest::Result r = guitest::run_cli(run_args(dir, "--video '" + dir.file("a.gif") + "' --size 161x121"), logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  const Probe g = probe(dir.file("a.gif"), logs.path());
  EXPECT_EQ(g.frames, kFrames);
  EXPECT_EQ(g.w, 161);  // GIF takes odd sizes
  EXPECT_EQ(g.h, 121);
  r = guitest::run_cli(run_args(dir, "--video '" + dir.file("b.webp") + "' --video-lossless --size 161x121 "
                                     "--video-frames 5:10"),
                       logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  const WebpInfo w = read_webp(dir.file("b.webp"));
  EXPECT_EQ(w.frames, 6);  // frames 5..10
  EXPECT_EQ(w.w, 161);
  EXPECT_EQ(w.h, 121);
  r = guitest::run_cli(run_args(dir, "--video '" + dir.file("c.mp4") + "' --size 161x121"), logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  const Probe m = probe(dir.file("c.mp4"), logs.path());
  EXPECT_EQ(m.w, 160);  // yuv420p needs even sizes: rounded down
  EXPECT_EQ(m.h, 120);
  EXPECT_EQ(m.frames, kFrames);
}

// The GUI's Export section through the headless script: `export video PATH fps` encodes frames 0..shown.
TEST(SampleVideo, HeadlessScriptExportsFramesUpToTheShownOne) {
  if (!have_ffmpeg()) GTEST_SKIP() << "ffmpeg/ffprobe not installed (scripts/install-deps.sh installs them)";
  test::TempDir dir, logs;
  std::ofstream(dir.file("s.txt")) << "set n 300\nset t_start 500\nset steps 30\nwait_complete 5000\n"
                                      "key Left\nkey Left\nset export_size 161x121\nexport video "
                                   << dir.file("g.mp4") << " 12\n";
  const guitest::Result r = guitest::run_cli("gui --headless --backend cpu --no-persist --size 1024x700 --model '" +
                                                 guitest::model_2d() + "' --script '" + dir.file("s.txt") + "'",
                                             logs.path());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("export video: " + dir.file("g.mp4")), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(guitest::slurp(dir.file("g.mp4.json")));
  const Probe p = probe(dir.file("g.mp4"), logs.path());
  EXPECT_EQ(j["frames"].front().get<int>(), 0);
  EXPECT_EQ(j["frames"].back().get<int>(), j["frame"].get<int>());  // up to the shown frame
  EXPECT_LT(j["frame"].get<int>(), 30);                             // two steps back from the end
  EXPECT_EQ(p.frames, int(j["frames"].size()));
  EXPECT_EQ(p.w, 160);
  EXPECT_EQ(p.h, 120);
  EXPECT_EQ(j["fps"].get<int>(), 12);
}

// Without ffmpeg the GUI says why and writes the same frames as a PNG sequence into the export folder.
TEST(SampleVideo, HeadlessWithoutFfmpegFallsBackToPngFrames) {
  test::TempDir dir, logs;
  std::ofstream(dir.file("s.txt")) << "set n 200\nset t_start 300\nset steps 8\nwait_complete 5000\nset export_dir "
                                   << dir.file("exports") << "\nset export_size 64x48\nexport video "
                                   << dir.file("g.mp4") << "\n";
  const guitest::Result r = guitest::run_cli("gui --headless --backend cpu --no-persist --size 1024x700 --model '" +
                                                 guitest::model_2d() + "' --script '" + dir.file("s.txt") + "'",
                                             logs.path(), "env -u DIFFSCOPE_FFMPEG PATH=/nonexistent");
  // No ffmpeg is a missing resource: exit 3 (as `sample --video`), after the PNG frames were written.
  ASSERT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("1 command failed, the first: script:7: export video:"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("export video: error:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("apt-get install ffmpeg"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir.file("g.mp4")));
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir.file("exports/frames_0001"))) n += e.path().extension() == ".png";
  EXPECT_EQ(n, 9);  // frames 0..8, the shown one being the last
}

TEST(SampleVideo, BadVideoArgumentsAreRefusedBeforeAnyWork) {
  test::TempDir dir, logs;
  const struct {
    std::string args, names;
  } cases[] = {{"--video '" + dir.file("v.avi") + "'", "--video"},
               {"--video '" + dir.file("v.mp4") + "' --fps 0", "--fps"},
               {"--video '" + dir.file("v.mp4") + "' --video-frames 9:3", "--video-frames"},
               {"--video '" + dir.file("v.mp4") + "' --video-frames 0:21", "--video-frames"},
               {"--video '" + dir.file("v.mp4") + "' --size 9x9", "--size"},
               // the trajectory and the video's sidecar v.mp4.json would be one file (one check for every output)
               {"--trajectory '" + dir.file("v.mp4.json") + "' --video '" + dir.file("v.mp4") + "'", "sidecar of --video"}};
  for (const auto& c : cases) {
    const guitest::Result r = guitest::run_cli(run_args(dir, c.args), logs.path());
    EXPECT_EQ(r.code, 2) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.names), std::string::npos) << r.err;
    EXPECT_TRUE(dir.entries().empty()) << c.args;
  }
}

// A picture and a video of one name keep a sidecar each (a.json, a.mp4.json); --config takes the video's sidecar
// and the video itself.
TEST(SampleVideo, APictureAndAVideoOfOneNameKeepASidecarEach) {
  if (!have_ffmpeg()) GTEST_SKIP() << "ffmpeg/ffprobe not installed (scripts/install-deps.sh installs them)";
  test::TempDir dir, logs;
  guitest::Result r = guitest::run_cli(run_args(dir, "--size 64x48 --png '" + dir.file("a.png") + "' --video '" +
                                                         dir.file("a.mp4") + "'"),
                                       logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  const auto pic = nlohmann::json::parse(guitest::slurp(dir.file("a.json")));
  const auto vid = nlohmann::json::parse(guitest::slurp(dir.file("a.mp4.json")));
  EXPECT_EQ(pic["png"], "a.png");
  EXPECT_EQ(vid["video"], "a.mp4");
  EXPECT_EQ(vid["frames"].size(), size_t(kFrames));
  const std::string want = guitest::slurp(dir.file("x.npy"));
  ASSERT_FALSE(want.empty());
  for (const char* config : {"a.mp4.json", "a.mp4"}) {
    r = guitest::run_cli("sample --config '" + dir.file(config) + "' --out '" + dir.file("y.npy") + "'", logs.path());
    ASSERT_EQ(r.code, 0) << config << ": " << r.err;
    EXPECT_EQ(guitest::slurp(dir.file("y.npy")), want) << config;
  }
}

TEST(SampleVideo, TheVKeyExportsAVideoOfTheFirstFrameToTheShownOne) {
  if (!have_ffmpeg()) GTEST_SKIP() << "ffmpeg/ffprobe not installed (scripts/install-deps.sh installs them)";
  test::TempDir dir, logs;
  const std::string script = dir.file("v.txt"), out = dir.file("exports");
  // 6 steps, scrubbed back 2 frames: the video holds frames 0..4 (5 frames) at the export size 96x64.
  std::ofstream(script) << "set n 60\nset steps 6\nset export_size 96x64\nset export_dir " << out
                        << "\nwait_complete 5000\nkey Left\nkey Left\nkey V\nframes 30\n";
  const guitest::Result r = guitest::run_cli("gui --headless --backend cpu --no-persist --size 640x480 --model '" +
                                                 guitest::model_2d() + "' --script '" + script + "'",
                                             logs.path());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const std::string video = out + "/video_0001.mp4";
  ASSERT_TRUE(fs::exists(video)) << r.out << r.err;
  const Probe p = probe(video, logs.path());
  EXPECT_EQ(p.frames, 5);
  EXPECT_EQ(p.w, 96);
  EXPECT_EQ(p.h, 64);
  EXPECT_EQ(nlohmann::json::parse(guitest::slurp(out + "/video_0001.mp4.json"))["frames"].size(), 5u);
}

}  // namespace
}  // namespace diffscope
