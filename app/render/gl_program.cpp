// gl_program.cpp — shader lookup, compilation and linking.
#include "render/gl_program.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "shaders_embedded.h"

namespace diffscope::render {

std::string shader_source(const std::string& name) {
  if (const char* dir = std::getenv("DIFFSCOPE_SHADER_DIR"); dir && *dir) {
    std::ifstream f(std::string(dir) + "/" + name);
    if (f) {
      std::ostringstream s;
      s << f.rdbuf();
      return s.str();
    }
  }
  for (const auto* e = shaders::kEmbedded; e->name; ++e)
    if (name == e->name) return e->text;
  throw std::runtime_error("shader '" + name + "' not found (embedded from shaders/)");
}

static GLuint compile(GLenum type, const std::vector<std::string>& files) {
  std::string src = "#version 430 core\n";
  std::string label;
  for (const auto& f : files) {
    src += "#line 1\n" + shader_source(f) + "\n";
    label += (label.empty() ? "" : "+") + f;
  }
  GLuint s = glCreateShader(type);
  const char* p = src.c_str();
  glShaderSource(s, 1, &p, nullptr);
  glCompileShader(s);
  GLint ok = 0;
  glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    char log[4096];
    glGetShaderInfoLog(s, sizeof log, nullptr, log);
    glDeleteShader(s);
    throw std::runtime_error("compiling " + label + ": " + log);
  }
  return s;
}

// Links the compiled shaders into a program (and deletes them); throws with the driver's log.
static GLuint link(const std::vector<GLuint>& shaders) {
  GLuint id = glCreateProgram();
  for (GLuint s : shaders) glAttachShader(id, s);
  glLinkProgram(id);
  for (GLuint s : shaders) glDeleteShader(s);
  GLint ok = 0;
  glGetProgramiv(id, GL_LINK_STATUS, &ok);
  if (!ok) {
    char log[4096];
    glGetProgramInfoLog(id, sizeof log, nullptr, log);
    glDeleteProgram(id);
    throw std::runtime_error(std::string("linking program: ") + log);
  }
  return id;
}

GlProgram::GlProgram(const std::vector<std::string>& comp_files) : m_id(link({compile(GL_COMPUTE_SHADER, comp_files)})) {}

GlProgram::GlProgram(const std::vector<std::string>& vert_files, const std::vector<std::string>& frag_files) {
  GLuint vs = compile(GL_VERTEX_SHADER, vert_files);
  GLuint fs = compile(GL_FRAGMENT_SHADER, frag_files);
  m_id = link({vs, fs});
}

GlProgram& GlProgram::operator=(GlProgram&& o) noexcept {
  if (this != &o) {
    if (m_id) glDeleteProgram(m_id);
    m_id = o.m_id;
    o.m_id = 0;
  }
  return *this;
}

GlProgram::~GlProgram() {
  if (m_id) glDeleteProgram(m_id);
}

}  // namespace diffscope::render
