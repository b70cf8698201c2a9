// video_writer.cpp — ffmpeg as a child process (posix_spawnp) reading raw frames from a pipe, its stderr kept in
// memory (memfd) for the error message.
#include "formats/video_writer.h"

#include <algorithm>
#include <cctype>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/errors.h"
#include "formats/json_path.h"
#include "platform/atomic_write.h"
#include "platform/stop_signal.h"

extern char** environ;

namespace diffscope {

VideoFormat video_format_of(const std::string& arg, const std::string& path) {
  const size_t dot = path.find_last_of('.');
  std::string ext = dot == std::string::npos ? "" : path.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (ext == "mp4") return VideoFormat::Mp4;
  if (ext == "gif") return VideoFormat::Gif;
  if (ext == "webp") return VideoFormat::Webp;
  throw InvalidInput(arg + " = " + path + ": unknown video format; valid: a path ending in .mp4, .gif or .webp");
}

void video_frame_size(VideoFormat f, int* w, int* h) {
  if (f != VideoFormat::Mp4) return;
  *w -= *w % 2;
  *h -= *h % 2;
}

void check_video_fps(const std::string& arg, double fps) {
  if (!(fps >= 1 && fps <= 240))
    throw InvalidInput(arg + " = " + std::to_string(fps) + " is out of range; valid: frames per second in [1, 240]");
}

std::string ffmpeg_command() {
  const char* e = std::getenv("DIFFSCOPE_FFMPEG");
  return e && *e ? e : "ffmpeg";
}

namespace {
std::string ffmpeg_missing(const std::string& arg, const std::string& path, const std::string& prog, const std::string& why) {
  return arg + " " + path + ": cannot start '" + prog + "' (" + why +
         "); video export needs ffmpeg: install Debian's package (apt-get install ffmpeg) or set DIFFSCOPE_FFMPEG to its path";
}
bool executable(const std::string& file) {
  struct stat st {};
  return ::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(file.c_str(), X_OK) == 0;
}
}  // namespace

void check_ffmpeg_available(const std::string& arg, const std::string& path) {
  const std::string prog = ffmpeg_command();
  if (prog.find('/') != std::string::npos) {
    if (executable(prog)) return;
  } else {  // PATH as posix_spawnp searches it
    const char* env = std::getenv("PATH");
    const std::string dirs = env ? env : "/usr/local/bin:/usr/bin:/bin";
    size_t a = 0;
    for (;;) {
      const size_t b = dirs.find(':', a);
      const std::string dir = dirs.substr(a, b == std::string::npos ? std::string::npos : b - a);
      if (executable((dir.empty() ? "." : dir) + "/" + prog)) return;
      if (b == std::string::npos) break;
      a = b + 1;
    }
  }
  throw ResourceUnavailable(ffmpeg_missing(arg, path, prog, "not found"));
}

std::vector<std::string> ffmpeg_args(const VideoOptions& o, VideoFormat f, const std::string& out) {
  char fps[32];
  std::snprintf(fps, sizeof fps, "%.6g", o.fps);
  std::vector<std::string> a = {"-hide_banner", "-loglevel", "error", "-nostdin", "-y",
                                "-f", "rawvideo", "-pix_fmt", "rgba",
                                "-s", std::to_string(o.width) + "x" + std::to_string(o.height),
                                "-framerate", fps, "-i", "pipe:0"};
  auto add = [&](std::initializer_list<const char*> more) { a.insert(a.end(), more.begin(), more.end()); };
  switch (f) {
    case VideoFormat::Mp4:
      if (o.lossless)
        add({"-c:v", "libx264rgb", "-qp", "0", "-pix_fmt", "rgb24"});
      else
        // yuv444p at CRF 12: >= 35 dB RGB PSNR on 3-pixel points (CRF 18: 34.1-34.8 dB); yuv420p at CRF 18
        // (its 2x2 chroma caps RGB near 32 dB at any CRF). SEMANTICS §6.
        add({"-c:v", "libx264", "-crf", o.yuv420 ? "18" : "12", "-pix_fmt", o.yuv420 ? "yuv420p" : "yuv444p"});
      add({"-movflags", "+faststart", "-f", "mp4"});
      break;
    case VideoFormat::Gif:  // one palette for the whole clip (palettegen), then mapped onto it (paletteuse)
      add({"-filter_complex", "[0:v]split[a][b];[a]palettegen[p];[b][p]paletteuse", "-loop", "0", "-f", "gif"});
      break;
    case VideoFormat::Webp:
      if (o.lossless)
        add({"-c:v", "libwebp", "-lossless", "1"});
      else
        add({"-c:v", "libwebp", "-lossless", "0", "-quality", "90"});
      add({"-loop", "0", "-f", "webp"});
      break;
  }
  a.push_back(out);
  return a;
}

VideoWriter::VideoWriter(const VideoOptions& o) : m_o(o), m_format(video_format_of(o.arg, o.path)) {
  check_video_fps(o.arg, o.fps);
  int w = o.width, h = o.height;
  video_frame_size(m_format, &w, &h);
  if (w != o.width || h != o.height || w < 2 || h < 2)
    throw InvalidInput(o.arg + " " + o.path + ": frame size " + std::to_string(o.width) + "x" +
                       std::to_string(o.height) + " does not suit the format; valid: even sizes for .mp4");
  static std::atomic<unsigned> counter{0};
  // The temporary name keeps the extension last so that nothing mistakes it for the finished file; it sits beside
  // the file the video replaces (a link's target; a device or FIFO is refused: output_target).
  m_target = output_target(o.path, o.arg);
  m_tmp = m_target + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  // The temporary file is created here (ffmpeg -y writes over it), so a missing or unwritable folder is named as
  // such (not as a missing ffmpeg).
  const int tmp_fd = ::open(m_tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (tmp_fd < 0) throw InvalidInput(o.arg + " " + o.path + ": cannot write (" + std::strerror(errno) + ")");
  ::close(tmp_fd);
  // ffmpeg's stderr goes to memory (memfd), else to an unlinked file in $TMPDIR: never beside the output, whose
  // file system may be the full one that ffmpeg reports.
  m_log_fd = open_log();
  if (m_log_fd < 0) {
    const std::string why = std::strerror(errno);
    ::unlink(m_tmp.c_str());
    throw ResourceUnavailable(o.arg + ": cannot create a buffer for ffmpeg's messages: " + why);
  }
  int pipe_fd[2];
  if (::pipe2(pipe_fd, O_CLOEXEC) != 0) {
    const std::string why = std::strerror(errno);
    ::close(m_log_fd);
    m_log_fd = -1;
    ::unlink(m_tmp.c_str());
    throw ResourceUnavailable(o.arg + ": cannot create a pipe: " + why);
  }
  (void)::fcntl(pipe_fd[1], F_SETPIPE_SZ, 1 << 20);  // fewer blocking writes per frame; ignored when refused
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pipe_fd[0], 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, m_log_fd, 2);
  const std::string prog = ffmpeg_command();
  std::vector<std::string> args = ffmpeg_args(o, m_format, m_tmp);
  args.insert(args.begin(), prog);
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  const int rc = ::posix_spawnp(&m_pid, prog.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(pipe_fd[0]);
  if (rc != 0) {
    ::close(pipe_fd[1]);
    ::close(m_log_fd);
    m_log_fd = -1;
    ::unlink(m_tmp.c_str());
    m_pid = -1;
    throw ResourceUnavailable(ffmpeg_missing(o.arg, o.path, prog, std::strerror(rc)));
  }
  m_fd = pipe_fd[1];
  m_buf.resize(size_t(w) * h * 4);
}

VideoWriter::~VideoWriter() {
  if (m_pid > 0) cleanup();
  if (m_log_fd >= 0) ::close(m_log_fd);
}

int VideoWriter::open_log() {
#ifdef MFD_CLOEXEC
  const int fd = ::memfd_create("ffmpeg-stderr", MFD_CLOEXEC);
  if (fd >= 0) return fd;
#endif
  const char* tmp = std::getenv("TMPDIR");
  return ::open(tmp && *tmp ? tmp : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
}

std::string VideoWriter::ffmpeg_log() const {
  std::string t;
  if (m_log_fd >= 0) {
    char buf[4096];
    for (off_t at = 0;;) {
      const ssize_t n = ::pread(m_log_fd, buf, sizeof buf, at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      t.append(buf, size_t(n));
      at += n;
      if (t.size() > (1u << 20)) t.erase(0, t.size() - 4096);  // the last lines are what is reported
    }
  }
  return last_lines(t);
}

std::string last_lines(const std::string& text, size_t max_lines, size_t max_chars) {
  std::vector<std::string> lines;
  std::string line;
  for (const char c : text + "\n") {
    if (c != '\n' && c != '\r') {
      line += c;
      continue;
    }
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (!line.empty()) lines.push_back(line);
    line.clear();
  }
  std::string t;
  for (size_t i = lines.size() > max_lines ? lines.size() - max_lines : 0; i < lines.size(); ++i)
    t += (t.empty() ? "" : " | ") + lines[i];
  if (t.size() > max_chars) t = "..." + t.substr(t.size() - max_chars);
  // Control characters (a terminal's colour escapes, ESC = 0x1b) are written as \xHH too, as bytes that are not
  // UTF-8 are, so that the report cannot change the user's terminal.
  std::string safe;
  for (const char c : escape_invalid_utf8(t)) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02X", u);
      safe += hex;
    } else {
      safe += c;
    }
  }
  return safe;
}

std::string ffmpeg_status_text(int status) {
  if (WIFSIGNALED(status)) {
    const int s = WTERMSIG(status);
    const char* name = sigabbrev_np(s);
    return "ffmpeg was killed by signal " + std::to_string(s) + (name ? std::string(" (SIG") + name + ")" : "");
  }
  if (WIFEXITED(status)) return "ffmpeg exited " + std::to_string(WEXITSTATUS(status));
  return "ffmpeg stopped (status " + std::to_string(status) + ")";
}

int VideoWriter::reap(bool stop) {
  int status = 0;
  if (m_pid <= 0) return 0;
  if (stop) ::kill(m_pid, SIGTERM);
  pid_t r;
  // A child that closed its stdin has ended or is ending: give it a few seconds to write its last words, then
  // SIGKILL (a hung ffmpeg must not hang the caller).
  for (int waited_ms = 0; (r = ::waitpid(m_pid, &status, WNOHANG)) == 0; waited_ms += 10) {
    if (waited_ms == 5000) ::kill(m_pid, SIGKILL);
    ::usleep(10000);
  }
  if (r < 0) status = 0;
  m_pid = -1;
  return status;
}

void VideoWriter::cleanup() {
  if (m_fd >= 0) ::close(m_fd);
  m_fd = -1;
  reap(true);
  ::unlink(m_tmp.c_str());
}

void VideoWriter::fail(const std::string& why) {
  cleanup();
  const std::string log = ffmpeg_log();
  throw InvalidInput(m_o.arg + " " + m_o.path + ": " + why + (log.empty() ? "" : " (ffmpeg: " + log + ")"));
}

// ffmpeg ended before taking every frame or failed at the end: reaped first, then reported by how it ended,
// with its last lines ("No space left on device", ...).
void VideoWriter::fail_ended(const std::string& when) {
  if (m_fd >= 0) ::close(m_fd);
  m_fd = -1;
  const int status = reap(false);
  ::unlink(m_tmp.c_str());
  const std::string log = ffmpeg_log();
  std::string what = ffmpeg_status_text(status);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) what = "ffmpeg " + when;
  throw InvalidInput(m_o.arg + " " + m_o.path + ": " + what + (log.empty() ? "" : ": " + log));
}

void VideoWriter::cancel() {
  if (m_pid > 0) cleanup();
}

void VideoWriter::add_frame(const uint8_t* rgba) {
  if (m_fd < 0) throw InvalidInput(m_o.arg + " " + m_o.path + ": the encode has ended");
  throw_if_stopped();  // SIGINT / SIGTERM (platform/stop_signal.h): the caller unwinds and cleanup() removes the file
  std::memcpy(m_buf.data(), rgba, m_buf.size());
  for (size_t i = 3; i < m_buf.size(); i += 4) m_buf[i] = 255;
  // A write to a pipe whose reader died raises SIGPIPE; block it on this thread and take back a pending
  // one so that an ffmpeg failure becomes an error message, not the end of the process.
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  size_t done = 0;
  int err = 0;
  while (done < m_buf.size()) {
    const ssize_t n = ::write(m_fd, m_buf.data() + done, m_buf.size() - done);
    if (n < 0) {
      if (errno == EINTR && stop_signal() == 0) continue;
      if (errno == EINTR) break;  // a stop signal: thrown below, after the signal mask is put back
      err = errno;
      break;
    }
    done += size_t(n);
  }
  if (err == EPIPE) {
    const timespec zero{0, 0};
    sigtimedwait(&pipe_set, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  throw_if_stopped();
  if (err == EPIPE) fail_ended("stopped reading frames");
  if (err) fail(std::string("cannot send frames to ffmpeg: ") + std::strerror(err));
  ++m_frames;
}

std::string VideoWriter::finish() {
  if (m_pid <= 0) throw InvalidInput(m_o.arg + " " + m_o.path + ": the encode has ended");
  if (m_frames == 0) fail("no frames to encode");
  ::close(m_fd);
  m_fd = -1;
  int status = 0;
  while (::waitpid(m_pid, &status, 0) < 0) {
    if (errno != EINTR) fail(std::string("cannot wait for ffmpeg: ") + std::strerror(errno));
  }
  m_pid = -1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ::unlink(m_tmp.c_str());
    const std::string log = ffmpeg_log();
    throw InvalidInput(m_o.arg + " " + m_o.path + ": " + ffmpeg_status_text(status) + (log.empty() ? "" : ": " + log));
  }
  // Flush the finished file to disk before it takes the path (as write_file_atomic does).
  const int fd = ::open(m_tmp.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    (void)::fsync(fd);
    ::close(fd);
  }
  if (::rename(m_tmp.c_str(), m_target.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(m_tmp.c_str());
    throw InvalidInput(m_o.arg + " " + m_o.path + ": cannot write (" + why + ")");
  }
  return m_o.path;
}

}  // namespace diffscope
