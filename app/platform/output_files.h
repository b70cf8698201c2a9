// output_files.h — checks on the files a command or an export will write, made before any work
// (SEMANTICS §9): no two outputs are one file, and their folders have room for them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace diffscope {

// One file a command will write: the argument that names it (the CLI's --out, sidecar of --png) and its path.
struct OutputFile {
  std::string arg, path;
  uint64_t bytes = 0;  // size when known before the work (0: unknown, not counted by check_output_space)
};

// The JSON sidecar beside a PNG (SEMANTICS §6): dir/name.png -> dir/name.json.
std::string png_sidecar_path(const std::string& png);
// The JSON sidecar beside a video (SEMANTICS §6): dir/name.mp4 -> dir/name.mp4.json, so that a picture and a video
// of one name (name.png and name.mp4) keep a sidecar each.
std::string video_sidecar_path(const std::string& video);
// True for the video files diffscope writes: .mp4, .gif, .webp (any case).
bool is_video_path(const std::string& path);
// The sidecar of any export: video_sidecar_path for a video, else png_sidecar_path (pictures, .npy exports).
std::string export_sidecar_path(const std::string& main);

// The first part of the folder path `dir` (the folder itself or one above it) that exists and is not a folder, e.g.
// "afile" for "afile/sub" when afile is a file; "" when there is none. Messages name it: "'afile' is a file, not a
// folder" says more than "does not exist" or "Not a directory".
std::string file_in_the_way(const std::string& dir);
// "'afile' is a file, not a folder" (or "is not a folder" for a device, FIFO, ...) for file_in_the_way's answer.
std::string file_in_the_way_text(const std::string& file);

// Throws InvalidInput naming both arguments and paths when two outputs are the same file: equal after
// normalisation (absolute, "." and ".." removed, symlinks of the existing part resolved: weakly_canonical),
// or, for files that exist, one file under two names (std::filesystem::equivalent: hard links).
void check_distinct_outputs(const std::vector<OutputFile>& outputs);

// Throws ResourceUnavailable when the outputs' sizes (bytes > 0) add up to more than the free space of the
// file system holding their folders (statvfs f_bavail; outputs on one file system are added together).
void check_output_space(const std::vector<OutputFile>& outputs);

}  // namespace diffscope
