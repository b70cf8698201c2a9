// layout_audit.h — finds UI text that cannot be read whole in this frame: a window whose items reach past the
// right edge of its visible content region (a label, button or line cut by the window's edge), and text wider
// than the box drawn around it (a combo's value, a fixed-width button's label, a drag box's number). Enabled by
// headless scripts (`expect clipped == 0`) and tests; off, every call returns at once.
#pragma once
#include <string>
#include <vector>

namespace diffscope::ui {

class LayoutAudit {
 public:
  bool enabled = false;
  // Around the panels of one frame: begin_frame starts a new list, end_frame makes it the one clipped() gives.
  void begin_frame() { m_building.clear(), m_reported.clear(); }
  void end_frame() { m_clipped = m_building; }
  // Inside a window, after a part of its items (`where`: a section) or before its End(): how far its items have
  // reached so far against the right edge of its content region (ImGui units). A window is reported once a
  // frame, at the first part that passed the edge.
  void check_window(const char* window_name, const char* where = nullptr);
  // After an item that draws `text` inside a box of `box_width` ImGui units (its frame minus padding and any arrow).
  void check_text(const char* item, const std::string& text, float box_width);
  // The last finished frame's findings, one line each ("window 'diffscope': items reach x = 412, visible to 398").
  const std::vector<std::string>& clipped() const { return m_clipped; }
  std::string report() const;

 private:
  std::vector<std::string> m_clipped, m_building, m_reported;  // m_reported: windows reported this frame
};

// The width inside the frame of the last item (a combo: minus its arrow button), for LayoutAudit::check_text.
float last_frame_inner_width(bool has_arrow, const char* label);

}  // namespace diffscope::ui
