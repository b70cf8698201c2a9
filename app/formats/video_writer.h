// video_writer.h — encodes a run's frames into MP4 (H.264), GIF or WebP through the system `ffmpeg`
// (Debian's package), started as a child process and fed raw RGBA frames on its stdin; not linked
// (SEMANTICS §6). The file appears at its path only when ffmpeg finished well (temporary file + rename,
// like every export; SEMANTICS §9).
#pragma once
#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

namespace diffscope {

enum class VideoFormat { Mp4, Gif, Webp };

struct VideoOptions {
  std::string path;       // output; its extension (.mp4, .gif, .webp) picks the format
  int width = 0, height = 0;  // frame size in pixels (even for MP4: see video_frame_size)
  double fps = 30;        // frames per second, in [1, 240]
  bool lossless = false;  // MP4: libx264rgb -qp 0 (RGB, exact); WebP: lossless; GIF: always 256-colour palette
  std::string arg = "video";  // the argument named in error messages (the caller's spelling)
  // MP4 (lossy): yuv420p, which every player plays (browsers, QuickTime, hardware decoders), instead of the
  // default yuv444p (H.264 High 4:4:4: full-resolution colour, so 3-pixel points keep theirs; ffmpeg-based
  // players such as VLC, mpv and ffplay play it, browsers and QuickTime mostly do not). SEMANTICS §6.
  bool yuv420 = false;
};

// The format of `path` by its extension; throws InvalidInput naming `arg` for any other extension.
VideoFormat video_format_of(const std::string& arg, const std::string& path);
// The frame size the codec takes for a wanted size: MP4 (yuv420p; yuv444p and libx264rgb for symmetry) needs even
// sizes, so odd ones are rounded down; GIF and WebP take any size.
void video_frame_size(VideoFormat f, int* w, int* h);
// Throws InvalidInput naming `arg` unless fps is in [1, 240].
void check_video_fps(const std::string& arg, double fps);
// The ffmpeg command: $DIFFSCOPE_FFMPEG when set, else `ffmpeg` on PATH.
std::string ffmpeg_command();
// Throws ResourceUnavailable (naming `arg` and `path`, and how to install ffmpeg) unless ffmpeg_command() names an
// executable file, directly or on PATH: checked before any work so that a run without ffmpeg writes nothing.
void check_ffmpeg_available(const std::string& arg, const std::string& path);
// The ffmpeg arguments (without the program name) that read raw RGBA frames of `o` from stdin and write
// `out` in format `f`. Exposed for the tests and for the fallback's hint.
std::vector<std::string> ffmpeg_args(const VideoOptions& o, VideoFormat f, const std::string& out);
// How a child ended, from waitpid's status: "ffmpeg exited N" or "ffmpeg was killed by signal S (SIGNAME)".
std::string ffmpeg_status_text(int status);
// The last `max_lines` non-empty lines of `text` joined by " | " (at most `max_chars`, cut at the front), with
// bytes that are not well-formed UTF-8 and control characters written as \xHH: a child's stderr made into one
// message line that cannot change the terminal it is printed on.
std::string last_lines(const std::string& text, size_t max_lines = 4, size_t max_chars = 600);

// One encode in progress. Frames are RGBA rows, top row first, width*height*4 bytes each; alpha is sent
// as 255 (videos are opaque). Errors: ResourceUnavailable when ffmpeg cannot be started (not installed:
// the message says how to install it); InvalidInput naming the path when ffmpeg fails ("ffmpeg exited N: <its last
// lines>", "ffmpeg was killed by signal S") or the file cannot be written. ffmpeg's stderr is kept in memory
// (memfd; else an unlinked file in $TMPDIR), never beside the output, and the child is reaped before the report.
class VideoWriter {
 public:
  explicit VideoWriter(const VideoOptions& o);
  ~VideoWriter();  // cancels an unfinished encode
  VideoWriter(const VideoWriter&) = delete;
  VideoWriter& operator=(const VideoWriter&) = delete;

  void add_frame(const uint8_t* rgba);
  // Closes the pipe, waits for ffmpeg and renames the file into place. Returns the path written.
  std::string finish();
  // Stops ffmpeg and removes everything it wrote; the path is left as it was.
  void cancel();
  int frames() const { return m_frames; }
  VideoFormat format() const { return m_format; }

 private:
  [[noreturn]] void fail(const std::string& why);
  [[noreturn]] void fail_ended(const std::string& when);
  static int open_log();
  std::string ffmpeg_log() const;
  int reap(bool stop);
  void cleanup();
  VideoOptions m_o;
  VideoFormat m_format;
  std::string m_target, m_tmp;  // the file replaced (output_target), the temporary video
  int m_log_fd = -1;            // ffmpeg's stderr (memfd)
  pid_t m_pid = -1;
  int m_fd = -1;  // ffmpeg's stdin
  int m_frames = 0;
  std::vector<uint8_t> m_buf;
};

}  // namespace diffscope
