// output_files.cpp — output collisions and free space, checked before any work.
#include "platform/output_files.h"

#include <cctype>

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "base/errors.h"

namespace fs = std::filesystem;

namespace diffscope {
namespace {

fs::path normalised(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) p = fs::absolute(path, ec).lexically_normal();
  return p;
}

std::string folder_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

std::string gb(double bytes) {
  std::ostringstream s;
  s.precision(3);
  s << bytes / 1e9 << " GB";
  return s.str();
}

}  // namespace

std::string png_sidecar_path(const std::string& png) {
  const fs::path p(png);
  return (p.parent_path() / (p.stem().string() + ".json")).string();
}

std::string file_in_the_way(const std::string& dir) {
  if (dir.empty()) return "";
  for (size_t end = dir.find('/', 1);; end = dir.find('/', end + 1)) {
    const std::string part = dir.substr(0, end);
    struct stat st {};
    if (::stat(part.c_str(), &st) != 0) return "";  // missing: nothing further can exist
    if (!S_ISDIR(st.st_mode)) return part;
    if (end == std::string::npos) return "";
  }
}

std::string file_in_the_way_text(const std::string& file) {
  struct stat st {};
  const bool regular = ::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  return "'" + file + (regular ? "' is a file, not a folder" : "' is not a folder");
}

std::string video_sidecar_path(const std::string& video) { return video + ".json"; }

bool is_video_path(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".mp4" || ext == ".gif" || ext == ".webp";
}

std::string export_sidecar_path(const std::string& main) {
  return is_video_path(main) ? video_sidecar_path(main) : png_sidecar_path(main);
}

void check_distinct_outputs(const std::vector<OutputFile>& outputs) {
  std::vector<fs::path> norm;
  for (const OutputFile& o : outputs) norm.push_back(normalised(o.path));
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      std::error_code ec;
      const bool same = norm[i] == norm[j] || fs::equivalent(outputs[i].path, outputs[j].path, ec);
      if (same)
        throw InvalidInput(outputs[j].arg + " '" + outputs[j].path + "' and " + outputs[i].arg + " '" +
                           outputs[i].path + "' are the same file (" + norm[i].string() +
                           "); valid: a different path for each output");
    }
  }
}

void check_output_space(const std::vector<OutputFile>& outputs) {
  struct Need {
    uint64_t bytes = 0, avail = 0;
    std::string args;
  };
  std::map<unsigned long, Need> by_fs;  // keyed by statvfs f_fsid
  for (const OutputFile& o : outputs) {
    if (o.bytes == 0) continue;
    struct statvfs v {};
    if (::statvfs(folder_of(o.path).c_str(), &v) != 0) continue;  // check_output_path reports bad folders
    Need& n = by_fs[v.f_fsid];
    n.bytes += o.bytes;
    n.avail = static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
    n.args += (n.args.empty() ? "" : " + ") + o.arg + " '" + o.path + "' (" + gb(double(o.bytes)) + ")";
  }
  for (const auto& [id, n] : by_fs)
    if (n.bytes > n.avail)
      throw ResourceUnavailable(n.args + " need " + gb(double(n.bytes)) + " but the file system holding them has " +
                                gb(double(n.avail)) + " free; nothing was written");
}

}  // namespace diffscope
