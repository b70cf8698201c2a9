// window_fit.h — where the window opens: the asked size when it fits the monitor's work area (the screen less
// panels and docks, glfwGetMonitorWorkarea), else shrunk into it; the last window's size and place, kept in
// CONFIG_DIR/window.json. Plain arithmetic and a small file, no GLFW here.
#pragma once
#include <optional>
#include <string>

namespace diffscope::render {

struct WindowRect {
  int x = 0, y = 0, w = 0, h = 0;  // screen coordinates
};

// The window for `want_w` x `want_h` screen coordinates before the monitor's content scale `scale` (GLFW applies
// it on X11 and Windows with GLFW_SCALE_TO_MONITOR) on a work area `area`: when want x scale fits the area, w and
// h are the asked ones and x = y = -1 (the window system places it); otherwise each side that does not fit is
// 90% of the area's (room for the title bar and borders), divided by the scale, and the window is centred in the
// area. An area of zero size (unknown) changes nothing; the result is at least 1 x 1.
WindowRect fit_window(int want_w, int want_h, float scale, const WindowRect& area);

// A saved window (size before the content scale, as fit_window takes it) on the work area `area`: its size as
// fit_window makes it; its place kept when the whole window lies inside the area, else centred there (a monitor
// that went away, a hostile file). An area of zero size keeps both.
WindowRect place_saved_window(const WindowRect& saved, float scale, const WindowRect& area);

// The last window, kept apart from settings.json (not a setting of what is drawn: no key, no sidecar):
// {"x": X, "y": Y, "w": W, "h": H}. Missing, corrupt or hostile content gives nullopt: w and h must be integers
// in [200, 16384], x and y in [-100000, 100000].
std::optional<WindowRect> load_window_rect(const std::string& path);
// Writes it atomically; false when it cannot (the app goes on: the next start opens at the default size).
bool save_window_rect(const std::string& path, const WindowRect& r);

}  // namespace diffscope::render
