// key_queue.cpp — the frame's key presses: from the callback's queue, or polled from ImGui without one.
#include "ui/key_queue.h"

#include <imgui.h>

#include "ui/keys.h"

namespace diffscope::ui {

std::vector<KeyPress> KeyQueue::take() {
  if (m_connected) {
    std::vector<KeyPress> out;
    out.swap(m_presses);
    return out;
  }
  const ImGuiIO& io = ImGui::GetIO();
  std::vector<KeyPress> out;
  for (const int k : {kKeySpace, kKeyLeft, kKeyRight, kKeyHome, kKeyEnd, kKeyS, kKeyV, kKeyH, kKeyD, kKeyZ}) {
    const bool pressed = ImGui::IsKeyPressed(k, false);
    if (pressed || ImGui::IsKeyPressed(k, true)) out.push_back({k, io.KeyShift, io.KeyCtrl, !pressed});
  }
  return out;
}

}  // namespace diffscope::ui
