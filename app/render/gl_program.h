// gl_program.h — GLSL programs from the embedded shaders/ sources (or $DIFFSCOPE_SHADER_DIR), with errors
// that name the file and carry the driver's log.
#pragma once
#include <epoxy/gl.h>

#include <string>
#include <vector>

namespace diffscope::render {

// The text of shaders/<name>: from $DIFFSCOPE_SHADER_DIR when set (live editing), else embedded at build
// time. Throws std::runtime_error if there is no such shader.
std::string shader_source(const std::string& name);

// A linked program. Sources are concatenated after "#version 430 core" (each entry a shaders/ file name).
class GlProgram {
 public:
  GlProgram() = default;
  GlProgram(const std::vector<std::string>& vert_files, const std::vector<std::string>& frag_files);
  // A compute program from the files of one compute shader.
  explicit GlProgram(const std::vector<std::string>& comp_files);
  GlProgram(const GlProgram&) = delete;
  GlProgram& operator=(const GlProgram&) = delete;
  GlProgram(GlProgram&& o) noexcept : m_id(o.m_id) { o.m_id = 0; }
  GlProgram& operator=(GlProgram&& o) noexcept;
  ~GlProgram();
  GLuint id() const { return m_id; }
  void use() const { glUseProgram(m_id); }
  GLint loc(const char* name) const { return glGetUniformLocation(m_id, name); }

 private:
  GLuint m_id = 0;
};

}  // namespace diffscope::render
