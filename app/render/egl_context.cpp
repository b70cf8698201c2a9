// egl_context.cpp — EGL display selection and a surfaceless GL 4.3 core context.
#include "render/egl_context.h"

#include <epoxy/egl.h>
#include <epoxy/gl.h>

#include <cstring>
#include <vector>

#include "base/errors.h"

namespace diffscope::render {
namespace {

EGLContext try_context(EGLDisplay dpy, std::string* why) {
  EGLint major = 0, minor = 0;
  if (!eglInitialize(dpy, &major, &minor)) {
    *why += " (eglInitialize failed)";
    return EGL_NO_CONTEXT;
  }
  if (!eglBindAPI(EGL_OPENGL_API)) {
    *why += " (no desktop OpenGL API)";
    eglTerminate(dpy);
    return EGL_NO_CONTEXT;
  }
  // A pbuffer-capable config (the device platform has no window configs), else any OpenGL config, else
  // none at all (EGL_KHR_no_config_context): we never create a surface.
  EGLConfig cfg = nullptr;
  EGLint n = 0;
  for (EGLint surface : {EGLint(EGL_PBUFFER_BIT), EGLint(EGL_DONT_CARE)}) {
    const EGLint cfg_attr[] = {EGL_SURFACE_TYPE, surface, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_RED_SIZE, 8,
                               EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8, EGL_NONE};
    if (eglChooseConfig(dpy, cfg_attr, &cfg, 1, &n) && n >= 1) break;
    cfg = nullptr;
  }
  const EGLint ctx_attr[] = {EGL_CONTEXT_MAJOR_VERSION, 4, EGL_CONTEXT_MINOR_VERSION, 3,
                             EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
  EGLContext ctx = eglCreateContext(dpy, cfg, EGL_NO_CONTEXT, ctx_attr);
  if (ctx == EGL_NO_CONTEXT) {
    *why += " (no GL 4.3 core context)";
    eglTerminate(dpy);
    return EGL_NO_CONTEXT;
  }
  if (!eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
    *why += " (surfaceless make-current failed)";
    eglDestroyContext(dpy, ctx);
    eglTerminate(dpy);
    return EGL_NO_CONTEXT;
  }
  return ctx;
}

}  // namespace

EglContext::EglContext() {
  std::string tried;
  std::vector<std::pair<EGLDisplay, std::string>> displays;
  const char* client_ext = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  const std::string ext = client_ext ? client_ext : "";
  if (ext.find("EGL_EXT_platform_device") != std::string::npos) {
    EGLDeviceEXT devs[16];
    EGLint n = 0;
    if (eglQueryDevicesEXT(16, devs, &n)) {
      for (int i = 0; i < n; ++i) {
        EGLDisplay d = eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, devs[i], nullptr);
        if (d != EGL_NO_DISPLAY) displays.emplace_back(d, "EGL device " + std::to_string(i));
      }
    }
  }
  if (ext.find("EGL_MESA_platform_surfaceless") != std::string::npos) {
    EGLDisplay d = eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    if (d != EGL_NO_DISPLAY) displays.emplace_back(d, "EGL surfaceless (Mesa)");
  }
  EGLDisplay d = eglGetDisplay(EGL_DEFAULT_DISPLAY);
  if (d != EGL_NO_DISPLAY) displays.emplace_back(d, "EGL default display");

  for (auto& [dpy, name] : displays) {
    std::string why = name;
    EGLContext ctx = try_context(dpy, &why);
    if (ctx != EGL_NO_CONTEXT) {
      m_display = dpy;
      m_context = ctx;
      const char* vendor = reinterpret_cast<const char*>(glGetString(GL_VENDOR));
      const char* renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
      const char* version = reinterpret_cast<const char*>(glGetString(GL_VERSION));
      m_desc = name + ": " + (vendor ? vendor : "?") + " / " + (renderer ? renderer : "?") + " / GL " +
               (version ? version : "?");
      return;
    }
    tried += (tried.empty() ? "" : "; ") + why;
  }
  throw ResourceUnavailable("no headless OpenGL 4.3 core context through EGL" +
                            (tried.empty() ? std::string(" (no EGL display)") : ": tried " + tried));
}

EglContext::~EglContext() {
  if (m_display) {
    eglMakeCurrent(m_display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (m_context) eglDestroyContext(m_display, m_context);
    eglTerminate(m_display);
  }
}

}  // namespace diffscope::render
