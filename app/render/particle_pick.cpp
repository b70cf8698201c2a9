// particle_pick.cpp — the pick's compute passes over the trajectory buffer and the picked rows' highlight.
#include "render/particle_pick.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "render/renderer.h"
#include "run/frame_probe.h"

namespace diffscope::render {
namespace {

// A compute program of common.glsl + `file` (shaders/).
GLuint compute_program(const std::string& file) {
  const std::string src = "#version 430 core\n#line 1\n" + shader_source("common.glsl") + "\n#line 1\n" +
                          shader_source(file) + "\n";
  const GLuint s = glCreateShader(GL_COMPUTE_SHADER);
  const char* p = src.c_str();
  glShaderSource(s, 1, &p, nullptr);
  glCompileShader(s);
  GLint ok = 0;
  char log[4096] = "";
  glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
  if (!ok) {
    glGetShaderInfoLog(s, sizeof log, nullptr, log);
    glDeleteShader(s);
    throw std::runtime_error("compiling common.glsl+" + file + ": " + log);
  }
  const GLuint prog = glCreateProgram();
  glAttachShader(prog, s);
  glLinkProgram(prog);
  glDeleteShader(s);
  glGetProgramiv(prog, GL_LINK_STATUS, &ok);
  if (!ok) {
    glGetProgramInfoLog(prog, sizeof log, nullptr, log);
    glDeleteProgram(prog);
    throw std::runtime_error("linking " + file + ": " + log);
  }
  return prog;
}

void bind_rows(GLuint prog, const SceneInput& in, GLuint proj) {
  glUseProgram(prog);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, in.trajectory->gl_buffer());
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 2, proj);
  glUniform1i(glGetUniformLocation(prog, "u_dim"), in.dim);
  glUniform1i(glGetUniformLocation(prog, "u_B"), in.B);
}

// Okabe & Ito's colour-blind-safe palette (orange, sky blue, bluish green, yellow, blue, vermillion, purple).
constexpr float kPinColors[7][3] = {{0.90f, 0.62f, 0.00f}, {0.34f, 0.71f, 0.91f}, {0.00f, 0.62f, 0.45f},
                                    {0.94f, 0.89f, 0.26f}, {0.00f, 0.45f, 0.70f}, {0.84f, 0.37f, 0.00f},
                                    {0.80f, 0.47f, 0.65f}};

}  // namespace

ParticlePick::ParticlePick()
    : m_lines({"common.glsl", "pick_path.vert"}, {"color.frag"}),
      m_points({"common.glsl", "pick_path.vert"}, {"points.frag"}) {
  m_nearest = compute_program("pick_nearest.comp");
  m_path = compute_program("pick_path.comp");
  glGenBuffers(1, &m_result);
}

ParticlePick::~ParticlePick() {
  glDeleteProgram(m_nearest);
  glDeleteProgram(m_path);
  glDeleteBuffers(1, &m_result);
}

int ParticlePick::nearest(const SceneInput& in, GLuint proj, double x, double y, double radius) {
  if (!in.trajectory || in.B <= 0 || in.dim <= 0 || in.trajectory->size_bytes() == 0 || !(radius > 0)) return -1;
  const GLuint init[2] = {0x7f800000u, 0xffffffffu};  // +inf, no row
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, m_result);
  glBufferData(GL_SHADER_STORAGE_BUFFER, sizeof init, init, GL_DYNAMIC_READ);
  bind_rows(m_nearest, in, proj);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 3, m_result);
  glUniform1i(glGetUniformLocation(m_nearest, "u_slot"), in.slot);
  glUniform2f(glGetUniformLocation(m_nearest, "u_at"), float(x), float(y));
  glUniform1f(glGetUniformLocation(m_nearest, "u_r2"), float(radius * radius));
  const GLuint groups = static_cast<GLuint>((in.B + 255) / 256);
  for (int pass = 0; pass < 2; ++pass) {
    glUniform1i(glGetUniformLocation(m_nearest, "u_pass"), pass);
    glDispatchCompute(groups, 1, 1);
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
  }
  GLuint out[2] = {0, 0};
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, m_result);
  glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, sizeof out, out);  // 8 bytes: a wait, not a frame read-back
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
  glUseProgram(0);
  count_sync();
  return out[1] == 0xffffffffu ? -1 : static_cast<int>(out[1]);
}

std::vector<float> ParticlePick::row_path(const SceneInput& in, GLuint proj, int row, int n_slots) {
  std::vector<float> out(static_cast<size_t>(std::max(n_slots, 0)) * 2, 0.f);
  if (!in.trajectory || row < 0 || row >= in.B || n_slots <= 0 || in.trajectory->size_bytes() == 0) return out;
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, m_result);
  glBufferData(GL_SHADER_STORAGE_BUFFER, out.size() * sizeof(float), nullptr, GL_DYNAMIC_READ);
  bind_rows(m_path, in, proj);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 3, m_result);
  glUniform1i(glGetUniformLocation(m_path, "u_row"), row);
  glUniform1i(glGetUniformLocation(m_path, "u_slots"), n_slots);
  glDispatchCompute(static_cast<GLuint>((n_slots + 63) / 64), 1, 1);
  glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, m_result);
  glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, out.size() * sizeof(float), out.data());
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
  glUseProgram(0);
  count_sync();
  return out;
}

void ParticlePick::draw(const SceneInput& in, const float view[4]) {
  const int slots = std::min(in.pick_slots, static_cast<int>(in.trajectory->size_bytes() /
                                                             (size_t(std::max(in.B, 1)) * std::max(in.dim, 1) * 4)));
  for (size_t k = 0; k < in.picks.size(); ++k) {
    const int row = in.picks[k];
    if (row < 0 || row >= in.B || slots <= 0) continue;
    const float* c = kPinColors[k % 7];
    const auto use = [&](const GlProgram& p, float alpha, float size) {
      p.use();
      glUniform1i(p.loc("u_dim"), in.dim);
      glUniform1i(p.loc("u_B"), in.B);
      glUniform4fv(p.loc("u_view"), 1, view);
      glUniform1i(p.loc("u_row"), row);
      glUniform4f(p.loc("u_color"), c[0], c[1], c[2], alpha);
      glUniform1f(p.loc("u_point_size"), size);
    };
    use(m_lines, 0.95f, 1.0f);
    glLineWidth(2.0f);
    glDrawArrays(GL_LINE_STRIP, 0, slots);
    glLineWidth(1.0f);
    use(m_points, 0.9f, std::max(3.0f, in.point_size));  // a dot at each kept frame
    glDrawArrays(GL_POINTS, 0, slots);
    use(m_points, 1.0f, std::max(12.0f, 3.5f * in.point_size));  // the start: the handle a drag moves
    glDrawArrays(GL_POINTS, 0, 1);
    if (in.slot > 0 && in.slot < slots) {  // the shown frame's point, ringed in white
      use(m_points, 1.0f, std::max(10.0f, 3.0f * in.point_size));
      glUniform4f(m_points.loc("u_color"), 1.0f, 1.0f, 1.0f, 1.0f);
      glDrawArrays(GL_POINTS, in.slot, 1);
      use(m_points, 1.0f, std::max(7.0f, 2.0f * in.point_size));
      glDrawArrays(GL_POINTS, in.slot, 1);
    }
  }
}

}  // namespace diffscope::render
