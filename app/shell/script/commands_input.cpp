// commands_input.cpp — the script commands that type keys and move the mouse.
#include "shell/script/script.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cfloat>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "base/errors.h"
#include "base/words.h"
#include "diffusion/exact_lab.h"
#include "picture/exporter.h"
#include "picture/restore.h"
#include "platform/stop_signal.h"
#include "render/egl_display.h"
#include "run/frame_probe.h"
#include "session/script_args.h"
#include "session/settings_keys.h"
#include "shell/compute_select.h"
#include "shell/frame_loop.h"
#include "shell/run.h"
#include "ui/keys.h"
#include "ui/panels.h"

namespace diffscope::shell::script {

struct ScriptKey {
  const char* name;
  int code;
  char character;  // 0: none (the arrows, Home, End)
};
constexpr ScriptKey kScriptKeys[] = {{"Space", kKeySpace, ' '}, {"Left", kKeyLeft, 0}, {"Right", kKeyRight, 0},
                                     {"Home", kKeyHome, 0},     {"End", kKeyEnd, 0},   {"S", kKeyS, 's'},
                                     {"V", kKeyV, 'v'},         {"H", kKeyH, 'h'},
                                     {"D", kKeyD, 'd'},         {"Z", kKeyZ, 'z'}};

std::vector<std::string> script_key_names() {
  std::vector<std::string> names;
  for (const ScriptKey& k : kScriptKeys) names.push_back(k.name);
  return names;
}

const ScriptKey& script_key(const std::string& name) {
  return *std::find_if(std::begin(kScriptKeys), std::end(kScriptKeys), [&](const ScriptKey& k) { return name == k.name; });
}

// Holds `keys` down for one frame (with their characters, as a window's char callback adds them; none with Ctrl).
void keys_down(Script& sc, const std::vector<ScriptKey>& keys, bool shift, bool down, bool ctrl = false) {
  sc.io.KeyShift = down && shift;
  sc.io.KeyCtrl = down && ctrl;
  for (const ScriptKey& k : keys) {
    sc.io.KeysDown[k.code] = down;
    if (down && k.character && !ctrl)
      sc.io.AddInputCharacter(shift ? unsigned(std::toupper(k.character)) : unsigned(k.character));
  }
}

ScriptAction cmd_key(ScriptArgs& a) {
  const ScriptKey key = script_key(a.choice("KEY", script_key_names()));
  const std::string mod = a.choice_or("MODIFIER", {"shift", "ctrl"}, "");
  const bool shift = mod == "shift", ctrl = mod == "ctrl";
  a.end();
  return [key, shift, ctrl](Script& sc) {
    const bool exports = !ctrl && (key.code == kKeyS || key.code == kKeyV);
    if (exports) sc.watch_key_export();
    keys_down(sc, {key}, shift, true, ctrl);
    sc.frame();
    keys_down(sc, {key}, shift, false, ctrl);
    sc.frame();
    if (exports) sc.check_key_export();  // a snapshot is written by now; a video is checked when it ends
  };
}

constexpr RealRange kPixelRange{-1e6, 1e6};  // mouse positions, pixels (off the display is allowed)

ScriptAction cmd_mouse(ScriptArgs& a) {
  const double x = a.real("X", kPixelRange), y = a.real("Y", kPixelRange);
  const std::string b = a.choice_or("BUTTON", {"down", "up"}, "");
  a.end();
  return [x, y, b](Script& sc) {
    sc.io.MousePos = ImVec2(float(x), float(y));
    if (b == "down") sc.io.MouseDown[0] = true;
    if (b == "up") sc.io.MouseDown[0] = false;
    sc.frame();
  };
}

// click ITEM [KEY...]: a left click in the middle of a named item; the keys are pressed in the click's own frame,
// as a window delivers keys typed before its next frame (a slow frame on the CPU backend).
ScriptAction cmd_click(ScriptArgs& a) {
  const std::string name = a.choice("ITEM", named_item_names());
  std::vector<ScriptKey> keys;
  for (std::string k; !(k = a.choice_or("KEY (pressed in the click's frame; more may follow)", script_key_names(), "")).empty();)
    keys.push_back(script_key(k));
  a.end();
  return [name, keys](Script& sc) {
    const auto it = sc.app.ui().named_items.find(name);
    if (it == sc.app.ui().named_items.end())
      throw InvalidInput("click: " + name + " is not on the screen (its section is closed or the UI hidden)");
    sc.io.MousePos = ImVec2(0.5f * (it->second.x0 + it->second.x1), 0.5f * (it->second.y0 + it->second.y1));
    sc.frame();
    const bool exports = std::any_of(keys.begin(), keys.end(), [](const ScriptKey& k) { return k.code == kKeyS || k.code == kKeyV; });
    if (exports) sc.watch_key_export();
    sc.io.MouseDown[0] = true;
    keys_down(sc, keys, false, true);
    sc.frame();
    sc.io.MouseDown[0] = false;
    keys_down(sc, keys, false, false);
    sc.frame();
    if (exports) sc.check_key_export();
  };
}

ScriptAction cmd_wheel(ScriptArgs& a) {  // wheel X Y CLICKS: the mouse wheel at (X, Y) pixels (zoom)
  const double x = a.real("X", kPixelRange), y = a.real("Y", kPixelRange), clicks = a.real("CLICKS", {-1000, 1000});
  a.end();
  return [x, y, clicks](Script& sc) {
    sc.io.MousePos = ImVec2(float(x), float(y));
    sc.frame();
    sc.io.MouseWheel = float(clicks);
    sc.frame();
    sc.io.MouseWheel = 0;
  };
}

ScriptAction cmd_drag_timeline(ScriptArgs& a) {
  const float from = float(a.real("FROM", {-1, 2})), to = float(a.real("TO", {-1, 2}));
  const int n = int(a.integer_or("FRAMES", {1, 10000}, 8));
  a.end();
  return [from, to, n](Script& sc) {
    App& app = sc.app;
    ImGuiIO& io = sc.io;
    const UiState& ui = app.ui();
    auto x_at = [&](float u) { return ui.timeline_x0 + 1.0f + u * (ui.timeline_x1 - ui.timeline_x0 - 2.0f); };
    io.MousePos = ImVec2(x_at(from), ui.timeline_y);
    sc.frame();
    io.MouseDown[0] = true;
    sc.frame();
    for (int k = 1; k <= n; ++k) {
      io.MousePos = ImVec2(x_at(from + (to - from) * k / float(n)), ui.timeline_y);
      sc.frame();
    }
    io.MouseDown[0] = false;
    sc.frame();
    io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
    sc.frame();
  };
}

}  // namespace diffscope::shell::script
