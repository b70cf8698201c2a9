// egl_context.h — a headless OpenGL 4.3 core context through EGL (ARCHITECTURE.md "Headless"): the EGL
// device platform first (NVIDIA driver; Mesa lists a software device too), then Mesa's surfaceless
// platform, then the default display; no surface (EGL_KHR_surfaceless_context), render into an FBO.
#pragma once
#include <string>

namespace diffscope::render {

class EglContext {
 public:
  // Creates and makes current a GL 4.3 core context. Throws ResourceUnavailable naming every attempt.
  EglContext();
  ~EglContext();
  EglContext(const EglContext&) = delete;
  EglContext& operator=(const EglContext&) = delete;
  // "EGL device 0: NVIDIA ... / GL 4.6 ..." for logs and sidecars.
  const std::string& description() const { return m_desc; }

 private:
  void* m_display = nullptr;
  void* m_context = nullptr;
  std::string m_desc;
};

}  // namespace diffscope::render
