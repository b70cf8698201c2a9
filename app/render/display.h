// display.h — Display: where a frame is drawn and shown, the seam between the one frame loop
// (shell/frame_loop.h) and the window system (polyscope's Engine). Two implementations: GlfwDisplay (a window,
// render/glfw_display.h) and EglDisplay (an offscreen framebuffer in a headless EGL context,
// render/egl_display.h). Sizes are framebuffer pixels.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace diffscope::render {

struct DisplaySize {
  int w = 0, h = 0;  // 0 x 0: a minimised window (the app draws with an empty viewport)
};

// A frame's pixels: w x h, top row first, RGBA8.
struct Pixels {
  std::vector<uint8_t> rgba;
  int w = 0, h = 0;
};

class Display {
 public:
  virtual ~Display() = default;
  // Starts a frame: takes the window system's events (a window polls them; headless has none).
  virtual void begin_frame() = 0;
  // Binds the framebuffer the frame draws into (the window's, or the offscreen target).
  virtual void bind_target() = 0;
  // Shows the frame: the window swaps its buffers; headless waits for GL (glFinish).
  virtual void end_frame() = 0;
  // The frame drawn so far. A window reads its back buffer, so call it between the drawing and end_frame();
  // the offscreen target keeps its pixels until the next frame (and is at least 1 x 1).
  virtual Pixels read_rgba() const = 0;
  virtual DisplaySize size() const = 0;
  // The UI scale of the screen (HiDPI: 2 on a 200% monitor; 1 headless).
  virtual float content_scale() const = 0;
  // Whether end_frame() waits for the vertical blank (a window; headless ignores it).
  virtual void set_vsync(bool on) { (void)on; }
  // True once the user asked to close (the window's close button) or request_close() was called.
  virtual bool should_close() const { return false; }
  virtual void request_close() {}
  // "GL 4.5 ... / Mesa ..." or the EGL device, for logs.
  virtual std::string description() const = 0;
};

}  // namespace diffscope::render
