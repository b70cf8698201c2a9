// key_queue.h — key presses collected by the window's GLFW key callback, so that a tap shorter than one
// frame (press and release inside one glfwPollEvents) still acts exactly once. ImGui 1.86 only keeps
// io.KeysDown[], which such a tap never sets; the queue keeps every press in order.
#pragma once
#include <vector>

namespace diffscope::ui {

struct KeyPress {
  int key = 0;          // GLFW key code (ui/keys.h)
  bool shift = false, ctrl = false;
  bool repeat = false;  // an auto-repeat of a held key, not a new press
};

class KeyQueue {
 public:
  // Marks the queue as fed by a key callback; from then on presses come only from the queue.
  void connect() { m_connected = true; }
  bool connected() const { return m_connected; }
  // From the key callback: one press (or auto-repeat), in the order the events arrived.
  void push(const KeyPress& p) { m_presses.push_back(p); }
  // The presses of this frame: the queued ones (and empties the queue) when connected, else the ones
  // ImGui reports from io.KeysDown[] (the headless loop's scripted keys). Needs an ImGui frame.
  std::vector<KeyPress> take();

 private:
  bool m_connected = false;
  std::vector<KeyPress> m_presses;
};

}  // namespace diffscope::ui
