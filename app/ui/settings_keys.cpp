// settings_keys.cpp — named settings for scripts and the command line.
#include "ui/settings_keys.h"

#include <cstdio>

#include "core/errors.h"

namespace diffscope::ui {

void apply_setting(AppSettings& st, const std::string& key, const std::string& val) {
  SamplingSettings& s = st.sampling;
  ViewSettings& v = st.view;
  try {
    auto i = [&] { return std::stoll(val); };
    auto f = [&] { return std::stod(val); };
    auto b = [&] { return val == "1" || val == "true" || val == "on"; };
    if (key == "steps") s.steps = int(i());
    else if (key == "t_start") s.t_start = int(i());
    else if (key == "n") s.n_samples = int(i());
    else if (key == "sampler") s.sampler = parse_sampler(val);
    else if (key == "eta") s.eta = f();
    else if (key == "seed") s.seed = uint64_t(std::stoull(val));
    else if (key == "spl") s.steps_per_launch = int(i());
    else if (key == "precision") s.precision = parse_precision(val);
    else if (key == "from_data") s.from_data = b();
    else if (key == "budget_mb") s.memory_budget_mb = int(i());
    else if (key == "trail") v.trail_frames = int(i());
    else if (key == "field") v.show_field = b();
    else if (key == "field_x0") v.field_x0 = b();
    else if (key == "data") v.show_data = b();
    else if (key == "follow") v.follow_newest = b();
    else if (key == "speed") v.play_speed = float(f());
    else if (key == "loop") v.loop_resimulate = b();
    else if (key == "steps_per_frame") v.steps_per_frame = int(i());
    else if (key == "grid_cols") v.image_grid_cols = int(i());
    else if (key == "point_size") v.point_size = float(f());
    else if (key == "point_alpha") v.point_alpha = float(f());
    else if (key == "vsync") v.vsync = b();
    else if (key == "show_ui") v.show_ui = b();
    else if (key == "camera" && val == "auto") v.cam_auto = true;  // fitted on the next model load
    else if (key == "camera") {  // "x,y,half_h": a fixed camera (no automatic fit)
      double x = 0, y = 0, hh = 0;
      char extra = 0;
      if (std::sscanf(val.c_str(), "%lf,%lf,%lf%c", &x, &y, &hh, &extra) != 3 || !(hh > 0))
        throw InvalidInput("camera = " + val + "; want X,Y,HALF_HEIGHT with HALF_HEIGHT > 0");
      v.cam_x = x, v.cam_y = y, v.cam_half_h = hh, v.cam_auto = false;
    } else if (key == "export_dir") st.export_dir = val;
    else if (key == "export_size") {
      int w = 0, h = 0;
      if (std::sscanf(val.c_str(), "%dx%d", &w, &h) != 2 || w < 16 || h < 16 || w > 16384 || h > 16384)
        throw InvalidInput("export_size = " + val + "; want WxH with each in [16, 16384]");
      st.export_width = w, st.export_height = h;
    } else
      throw InvalidInput("unknown setting '" + key + "'");
  } catch (const std::invalid_argument&) {
    throw InvalidInput("setting " + key + " = '" + val + "' is not a number");
  } catch (const std::out_of_range&) {
    throw InvalidInput("setting " + key + " = '" + val + "' is out of range");
  }
}

}  // namespace diffscope::ui
