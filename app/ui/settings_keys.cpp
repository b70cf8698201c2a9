// settings_keys.cpp — named settings for scripts and the command line; their ranges are core/ranges.h's.
#include "ui/settings_keys.h"

#include <cmath>
#include <cstdio>

#include "core/errors.h"
#include "core/ranges.h"

namespace diffscope::ui {

namespace {
const char* const kKeys[] = {"steps",     "t_start",  "n",        "sampler",     "eta",         "seed",
                             "spl",       "precision", "from_data", "budget_mb",  "trail",       "field",
                             "field_x0",  "data",     "follow",   "speed",       "loop",        "steps_per_frame",
                             "grid_cols", "point_size", "point_alpha", "vsync",   "show_ui",     "export_dir",
                             "export_size", "camera", "spacing"};

// The whole text as an integer / a finite real, else InvalidInput naming `arg`.
int64_t parse_int(const std::string& arg, const std::string& v) {
  size_t used = 0;
  try {
    const long long x = std::stoll(v, &used);
    if (used == v.size()) return x;
  } catch (const std::out_of_range&) {
  } catch (const std::invalid_argument&) {
  }
  throw InvalidInput(arg + " = '" + v + "' is not an integer");
}
double parse_real(const std::string& arg, const std::string& v) {
  size_t used = 0;
  try {
    const double x = std::stod(v, &used);
    if (used == v.size() && std::isfinite(x)) return x;
  } catch (const std::exception&) {
  }
  throw InvalidInput(arg + " = '" + v + "' is not a finite number");
}
bool parse_bool(const std::string& arg, const std::string& v) {
  if (v == "1" || v == "true" || v == "on") return true;
  if (v == "0" || v == "false" || v == "off") return false;
  throw InvalidInput(arg + " = '" + v + "' is not a switch; valid: 1 0 true false on off");
}
int checked(const std::string& arg, int64_t v, IntRange r) {
  check_range(arg, v, r);
  return static_cast<int>(v);
}
// Returns the value in double: eta is a double setting and must read back exactly as typed (the CLI parses the
// same text to the same double); float settings convert at the assignment.
double checked(const std::string& arg, double v, RealRange r) {
  check_real_range(arg, v, r);
  return v;
}
}  // namespace

std::string setting_keys() {
  std::string s;
  for (const char* k : kKeys) s += (s.empty() ? "" : ", ") + std::string(k);
  return s;
}

void apply_setting(AppSettings& st, const std::string& key, const std::string& val, const std::string& arg_in) {
  SamplingSettings& s = st.sampling;
  ViewSettings& v = st.view;
  const std::string arg = arg_in.empty() ? key : arg_in;
  auto i = [&] { return parse_int(arg, val); };
  auto f = [&] { return parse_real(arg, val); };
  auto b = [&] { return parse_bool(arg, val); };
  // steps and t_start: only the lower bounds here (the upper ones depend on the model and on each other);
  // check_model_ranges checks the whole range once the model is known.
  auto at_least = [&](int64_t lo, const char* valid) {
    const int64_t x = i();
    if (x < lo || x > 2147483647) throw InvalidInput(arg + " = " + val + " is out of range; valid: " + valid);
    return static_cast<int>(x);
  };
  if (key == "steps") s.steps = at_least(1, "[1, t_start + 1]");
  else if (key == "t_start") s.t_start = at_least(0, "[0, T - 1] (T = 1000 for the bundled models)");
  else if (key == "n") s.n_samples = checked(arg, i(), sample_count_range(true));
  else if (key == "sampler") s.sampler = parse_sampler(val);
  else if (key == "spacing") s.spacing = parse_spacing(val);
  else if (key == "eta") s.eta = checked(arg, f(), RealRange{kEtaMin, kEtaMax});
  else if (key == "seed") {
    if (val.empty() || val.size() > 20 || val.find_first_not_of("0123456789") != std::string::npos)
      throw InvalidInput(arg + " = '" + val + "' is not an integer in [0, 18446744073709551615]");
    try {
      s.seed = std::stoull(val);
    } catch (const std::out_of_range&) {
      throw InvalidInput(arg + " = " + val + " is out of range; valid: [0, 18446744073709551615]");
    }
  } else if (key == "spl") s.steps_per_launch = checked(arg, i(), kStepsPerLaunchRange);
  else if (key == "precision") s.precision = parse_precision(val);
  else if (key == "from_data") s.from_data = b();
  else if (key == "budget_mb") s.memory_budget_mb = checked(arg, i(), kBudgetMbRange);
  else if (key == "trail") v.trail_frames = checked(arg, i(), kTrailFramesRange);
  else if (key == "field") v.show_field = b();
  else if (key == "field_x0") v.field_x0 = b();
  else if (key == "data") v.show_data = b();
  else if (key == "follow") v.follow_newest = b();
  else if (key == "speed") v.play_speed = checked(arg, f(), kPlaySpeedRange);
  else if (key == "loop") v.loop_resimulate = b();
  else if (key == "steps_per_frame") v.steps_per_frame = checked(arg, i(), kStepsPerFrameRange);
  else if (key == "grid_cols") v.image_grid_cols = checked(arg, i(), kGridColsRange);
  else if (key == "point_size") v.point_size = checked(arg, f(), kPointSizeRange);
  else if (key == "point_alpha") v.point_alpha = checked(arg, f(), kPointAlphaRange);
  else if (key == "vsync") v.vsync = b();
  else if (key == "show_ui") v.show_ui = b();
  else if (key == "camera" && val == "auto") v.cam_auto = true;  // fitted on the next model load
  else if (key == "camera") {  // "x,y,half_h": a fixed camera (no automatic fit), in the persisted ranges
    double x = 0, y = 0, hh = 0;
    char extra = 0;
    const PersistedRange *rx = find_persisted_range("view.cam_x"), *rh = find_persisted_range("view.cam_half_h");
    if (std::sscanf(val.c_str(), "%lf,%lf,%lf%c", &x, &y, &hh, &extra) != 3 || !(std::abs(x) <= rx->hi) ||
        !(std::abs(y) <= rx->hi) || !(hh >= rh->lo && hh <= rh->hi))
      throw InvalidInput(arg + " = " + val + " is not valid; want X,Y,HALF_HEIGHT with |X|, |Y| <= " +
                         std::to_string(rx->hi) + " and HALF_HEIGHT in [" + std::to_string(rh->lo) + ", " +
                         std::to_string(rh->hi) + "], or auto");
    v.cam_x = x, v.cam_y = y, v.cam_half_h = hh, v.cam_auto = false;
  } else if (key == "export_dir") st.export_dir = val;
  else if (key == "export_size") {
    int w = 0, h = 0;
    char x = 0, extra = 0;
    if (std::sscanf(val.c_str(), "%d%c%d%c", &w, &x, &h, &extra) != 3 || x != 'x' || w < 16 || h < 16 || w > 16384 ||
        h > 16384)
      throw InvalidInput(arg + " = " + val + " is not valid; want WxH with each in [16, 16384]");
    st.export_width = w, st.export_height = h;
  } else {
    throw InvalidInput(arg + ": unknown setting; valid keys: " + setting_keys());
  }
}

void check_model_ranges(const SamplingSettings& s, const Schedule& schedule, bool gpu,
                        const std::vector<std::pair<std::string, std::string>>& given) {
  for (const auto& [key, arg] : given) {
    if (key == "t_start") check_range(arg, s.t_start, t_start_range(schedule));
    if (key == "n") check_range(arg, s.n_samples, sample_count_range(gpu));
  }
  for (const auto& [key, arg] : given)  // after t_start: the steps' range depends on it
    if (key == "steps") check_range(arg, s.steps, sample_steps_range(s.t_start));
}

}  // namespace diffscope::ui
