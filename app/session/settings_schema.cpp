// settings_schema.cpp — the table of settings (settings_schema.h) and everything that walks it.
#include "session/settings_schema.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <type_traits>

#include "base/errors.h"
#include "base/ranges.h"
#include "diffusion/input_checks.h"
#include "formats/json_path.h"
#include "grid/grid_live.h"
#include "grid/grid_spec.h"
#include "session/field_quantity.h"

namespace diffscope {

const char* section_name(SettingSection s) {
  switch (s) {
    case SettingSection::Sampling: return "sampling";
    case SettingSection::View: return "view";
    case SettingSection::Export: return "export";
  }
  return "?";
}

double float_as_typed(float v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // the shortest text that reads back as this float
  return std::strtod(std::string(buf, r.ptr).c_str(), nullptr);
}

namespace {

// ---- text -> value (strict: InvalidInput naming `arg`) --------------------------------------------------------
// `valid` ("[lo, hi]") is named in the message, as the range checks name it (SEMANTICS §3).
int64_t parse_int(const std::string& arg, const std::string& v, const std::string& valid) {
  size_t used = 0;
  try {
    const long long x = std::stoll(v, &used);
    if (used == v.size()) return x;
  } catch (const std::exception&) {
  }
  throw InvalidInput(arg + " = '" + v + "' is not an integer; valid: " + valid);
}
double parse_real(const std::string& arg, const std::string& v, const std::string& valid) {
  size_t used = 0;
  try {
    const double x = std::stod(v, &used);
    if (used == v.size() && std::isfinite(x)) return x;
  } catch (const std::exception&) {
  }
  throw InvalidInput(arg + " = '" + v + "' is not a finite number; valid: " + valid);
}
bool parse_bool(const std::string& arg, const std::string& v) {
  if (v == "1" || v == "true" || v == "on") return true;
  if (v == "0" || v == "false" || v == "off") return false;
  throw InvalidInput(arg + " = '" + v + "' is not a switch; valid: 1 0 true false on off");
}
std::string num_text(double v) {  // integers in full (1000000, not 1e+06), other values as printed by <<
  if (std::abs(v) < 1e15 && v == std::floor(v)) return std::to_string(static_cast<int64_t>(v));
  std::ostringstream s;
  s << v;
  return s.str();
}

// ---- JSON -> value (tolerant: a note, the default kept) --------------------------------------------------------
void ill_typed(std::string* note, const SettingField& f, const char* valid) {
  if (note) *note += std::string("settings: ignored ill-typed field '") + f.key + "' (valid: " + valid + ")\n";
}

// A numeric row: the strict parse refuses outside [lo, hi] (or `strict` when given), loading clamps into [lo, hi].
template <class T, class Ref>
SettingField number(const char* key, SettingSection sec, std::vector<std::string> aliases, bool pixel, double lo,
                    double hi, Ref ref, std::function<T(const std::string&, const std::string&)> strict = {}) {
  SettingField f{key, sec, std::move(aliases), pixel, true, lo, hi, {}, {}, {}};
  f.get = [ref](const AppSettings& s) {
    if constexpr (std::is_same_v<T, float>) return nlohmann::json(float_as_typed(ref(const_cast<AppSettings&>(s))));
    else return nlohmann::json(ref(const_cast<AppSettings&>(s)));
  };
  if (!strict)
    strict = [lo, hi](const std::string& arg, const std::string& text) -> T {
      if constexpr (std::is_integral_v<T>) {
        const std::string valid = "[" + std::to_string(int64_t(lo)) + ", " + std::to_string(int64_t(hi)) + "]";
        const int64_t x = parse_int(arg, text, valid);
        check_range(arg, x, {static_cast<int64_t>(lo), static_cast<int64_t>(hi)});
        return static_cast<T>(x);
      } else {
        const double x = parse_real(arg, text, "[" + num_text(lo) + ", " + num_text(hi) + "]");
        check_real_range(arg, x, {lo, hi});
        return static_cast<T>(x);
      }
    };
  f.parse = [ref, strict](AppSettings& s, const std::string& text, const std::string& arg) { ref(s) = strict(arg, text); };
  const std::string name = std::string(section_name(sec)) + "." + key;
  f.load = [ref, lo, hi, name, key](AppSettings& s, const nlohmann::json& v, std::string* note) {
    // Read as a double first so that 1e16 for an int, or an out-of-range integer, is clamped instead of wrapping.
    if (!v.is_number() || !std::isfinite(v.get<double>())) {
      if (note) *note += std::string("settings: ignored ill-typed field '") + key + "' (valid: a number)\n";
      return;
    }
    const double d = v.get<double>(), c = std::min(std::max(d, lo), hi);
    if (c != d && note)
      *note += "settings: " + name + " = " + num_text(d) + " clamped to " + num_text(c) + " (valid: [" + num_text(lo) +
               ", " + num_text(hi) + "])\n";
    if constexpr (std::is_integral_v<T>)
      ref(s) = static_cast<T>(std::llround(c));
    else
      ref(s) = static_cast<T>(c);
  };
  return f;
}

template <class Ref>
SettingField flag(const char* key, SettingSection sec, std::vector<std::string> aliases, bool pixel, Ref ref) {
  SettingField f{key, sec, std::move(aliases), pixel, true, 0, 0, {}, {}, {}};
  f.get = [ref](const AppSettings& s) { return nlohmann::json(ref(const_cast<AppSettings&>(s))); };
  f.parse = [ref](AppSettings& s, const std::string& text, const std::string& arg) { ref(s) = parse_bool(arg, text); };
  f.load = [ref, key](AppSettings& s, const nlohmann::json& v, std::string* note) {
    if (v.is_boolean()) ref(s) = v.get<bool>();
    else if (note) *note += std::string("settings: ignored ill-typed field '") + key + "' (valid: true or false)\n";
  };
  return f;
}

// A named choice (sampler, spacing, precision, backend): `name` writes it, `parse` reads it (InvalidInput).
template <class T, class Ref>
SettingField choice(const char* key, SettingSection sec, bool pixel, Ref ref, std::function<std::string(T)> name,
                    std::function<T(const std::string&)> read) {
  SettingField f{key, sec, {}, pixel, true, 0, 0, {}, {}, {}};
  f.get = [ref, name](const AppSettings& s) { return nlohmann::json(name(ref(const_cast<AppSettings&>(s)))); };
  f.parse = [ref, read](AppSettings& s, const std::string& text, const std::string&) { ref(s) = read(text); };
  f.load = [ref, read, key](AppSettings& s, const nlohmann::json& v, std::string* note) {
    try {
      if (!v.is_string()) throw InvalidInput(std::string("ill-typed field '") + key + "' (valid: a name)");
      ref(s) = read(v.get<std::string>());
    } catch (const std::exception& e) {
      if (note) *note += std::string("settings: ") + e.what() + "\n";
    }
  };
  return f;
}

const std::string kSeedValid = "[0, 18446744073709551615]";

// The seed row: any uint64, in full (a JSON number of the settings file, or text of up to 20 digits).
SettingField seed_row() {
  using S = SettingSection;
  SettingField f{"seed", S::Sampling, {}, true, true, 0, 0, {}, {}, {}};
  f.get = [](const AppSettings& s) { return nlohmann::json(s.sampling.seed); };
  f.parse = [](AppSettings& s, const std::string& v, const std::string& arg) {
    if (v.empty() || v.size() > 20 || v.find_first_not_of("0123456789") != std::string::npos)
      throw InvalidInput(arg + " = '" + v + "' is not an integer in " + kSeedValid);
    try {
      s.sampling.seed = std::stoull(v);
    } catch (const std::out_of_range&) {
      throw InvalidInput(arg + " = " + v + " is out of range; valid: " + kSeedValid);
    }
  };
  f.load = [](AppSettings& s, const nlohmann::json& v, std::string* note) {  // every uint64 is a valid seed
    if (v.is_number_unsigned()) s.sampling.seed = v.get<uint64_t>();
    else if (note) *note += "settings: ignored ill-typed field 'seed' (valid: an integer in " + kSeedValid + ")\n";
  };
  return f;
}

// The camera shorthand: "X,Y,HALF_HEIGHT" (a fixed camera) or "auto" (fitted on the next model load).
SettingField camera_row() {
  using S = SettingSection;
  SettingField f{"camera", S::View, {}, false, false, 0, 0, {}, {}, {}};
  f.parse = [](AppSettings& s, const std::string& v, const std::string& arg) {
    if (v == "auto") {
      s.view.cam_auto = true;
      return;
    }
    double x = 0, y = 0, hh = 0;
    char extra = 0;
    if (std::sscanf(v.c_str(), "%lf,%lf,%lf%c", &x, &y, &hh, &extra) != 3 || !(std::abs(x) <= 1e5) ||
        !(std::abs(y) <= 1e5) || !(hh >= 1e-3 && hh <= 1e4))
      throw InvalidInput(arg + " = " + v + " is not valid; want X,Y,HALF_HEIGHT with |X|, |Y| <= 100000 and "
                         "HALF_HEIGHT in [0.001, 10000], or auto");
    s.view.cam_x = x, s.view.cam_y = y, s.view.cam_half_h = hh, s.view.cam_auto = false;
  };
  return f;
}

const char* const kFromFile = "from_file";  // the family rows' "the file says" (or, for flow_shift, its config)

// prediction_type: "from_file" (unset) or a family (model/family.h parse_family's names).
SettingField prediction_type_row() {
  using Opt = std::optional<Family>;
  SettingField f = choice<Opt>("prediction_type", SettingSection::Sampling, true,
                               [](AppSettings& s) -> Opt& { return s.sampling.prediction_type; },
                               [](Opt x) { return std::string(x ? family_name(*x) : kFromFile); },
                               [](const std::string& v) -> Opt {
                                 if (v == kFromFile) return std::nullopt;
                                 return parse_family(v, "prediction_type");
                               });
  f.parse = [](AppSettings& s, const std::string& v, const std::string& arg) {
    if (v == kFromFile) return void(s.sampling.prediction_type.reset());
    try {
      s.sampling.prediction_type = parse_family(v, arg);
    } catch (const InvalidInput&) {
      throw InvalidInput(arg + " = '" + v + "' is not valid; valid: " + kFromFile + ", " + family_choices());
    }
  };
  return f;
}

// flow_shift: "from_file" (unset: the scheduler config's, else the file's) or a shift in kFlowShiftRange.
SettingField flow_shift_row() {
  const RealRange r = kFlowShiftRange;
  const std::string valid = std::string(kFromFile) + " or a number in [" + num_text(r.lo) + ", " + num_text(r.hi) + "]";
  SettingField f{"flow_shift", SettingSection::Sampling, {}, true, true, r.lo, r.hi, {}, {}, {}};
  f.get = [](const AppSettings& s) {
    const auto& v = s.sampling.flow_shift;
    return v ? nlohmann::json(*v) : nlohmann::json(kFromFile);
  };
  f.parse = [valid, r](AppSettings& s, const std::string& v, const std::string& arg) {
    if (v == kFromFile) return void(s.sampling.flow_shift.reset());
    const double x = parse_real(arg, v, valid);
    if (!r.contains(x)) throw InvalidInput(arg + " = " + v + " is out of range; valid: " + valid);
    s.sampling.flow_shift = x;
  };
  f.load = [valid, r](AppSettings& s, const nlohmann::json& v, std::string* note) {
    if (v.is_string() && v.get<std::string>() == kFromFile) return s.sampling.flow_shift.reset();
    if (!v.is_number() || !std::isfinite(v.get<double>())) {
      if (note) *note += "settings: ignored ill-typed field 'flow_shift' (valid: " + valid + ")\n";
      return;
    }
    const double d = v.get<double>(), c = r.clamp(d);
    if (c != d && note)
      *note += "settings: sampling.flow_shift = " + num_text(d) + " clamped to " + num_text(c) + " (valid: " + valid + ")\n";
    s.sampling.flow_shift = c;
  };
  return f;
}

// The sampling rows (SEMANTICS §3): changing one re-simulates.
void add_sampling_rows(std::vector<SettingField>& t) {
  using S = SettingSection;
  {
    SettingField f{"model_path", S::Sampling, {}, false, true, 0, 0, {}, {}, {}};
    f.path = [](AppSettings& s) -> std::string& { return s.sampling.model_path; };
    t.push_back(f);  // no parse: the `model` command and --model load a model
  }
  t.push_back(number<int>("steps", S::Sampling, {}, true, 1, 1'000'000, [](AppSettings& s) -> int& { return s.sampling.steps; },
                          [](const std::string& arg, const std::string& v) {
                            // Only the lower bound here: the upper one depends on t_start (check_model_ranges).
                            const int64_t x = parse_int(arg, v, "[1, t_start + 1]");
                            if (x < 1 || x > 2147483647) throw InvalidInput(arg + " = " + v + " is out of range; valid: [1, t_start + 1]");
                            return static_cast<int>(x);
                          }));
  t.push_back(number<int>("t_start", S::Sampling, {}, true, 0, 999'999, [](AppSettings& s) -> int& { return s.sampling.t_start; },
                          [](const std::string& arg, const std::string& v) {
                            const std::string valid = "[0, T - 1] (T = 1000 for the bundled models)";
                            const int64_t x = parse_int(arg, v, valid);
                            if (x < 0 || x > 2147483647) throw InvalidInput(arg + " = " + v + " is out of range; valid: " + valid);
                            return static_cast<int>(x);
                          }));
  t.push_back(number<int>("n", S::Sampling, {"n_samples", "N"}, true, 1, 1'000'000,
                          [](AppSettings& s) -> int& { return s.sampling.n_samples; }));
  t.push_back(choice<Sampler>("sampler", S::Sampling, true, [](AppSettings& s) -> Sampler& { return s.sampling.sampler; },
                              [](Sampler x) { return std::string(sampler_name(x)); },
                              [](const std::string& v) { return parse_sampler(v); }));
  t.push_back(choice<Spacing>("spacing", S::Sampling, true, [](AppSettings& s) -> Spacing& { return s.sampling.spacing; },
                              [](Spacing x) { return std::string(spacing_name(x)); },
                              [](const std::string& v) { return parse_spacing(v); }));
  t.push_back(number<double>("eta", S::Sampling, {}, true, kEtaMin, kEtaMax, [](AppSettings& s) -> double& { return s.sampling.eta; }));
  t.push_back(prediction_type_row());
  t.push_back(flow_shift_row());
  t.push_back(seed_row());
  t.push_back(number<int>("steps_per_launch", S::Sampling, {"spl"}, false, double(kStepsPerLaunchRange.lo),
                          double(kStepsPerLaunchRange.hi), [](AppSettings& s) -> int& { return s.sampling.steps_per_launch; }));
  t.push_back(choice<Precision>("precision", S::Sampling, true, [](AppSettings& s) -> Precision& { return s.sampling.precision; },
                                [](Precision x) { return std::string(precision_name(x)); }, parse_precision));
  t.push_back(choice<std::string>("backend", S::Sampling, false, [](AppSettings& s) -> std::string& { return s.sampling.backend; },
                                  [](std::string x) { return x; }, [](const std::string& x) {
                                    if (x != "auto" && x != "cpu" && x != "cuda")
                                      throw InvalidInput("backend = '" + x + "' is not valid; valid: auto, cpu, cuda");
                                    return x;
                                  }));
  t.push_back(flag("from_data", S::Sampling, {}, true, [](AppSettings& s) -> bool& { return s.sampling.from_data; }));
  t.push_back(number<int>("memory_budget_mb", S::Sampling, {"budget_mb"}, true, double(kBudgetMbRange.lo),
                          double(kBudgetMbRange.hi), [](AppSettings& s) -> int& { return s.sampling.memory_budget_mb; }));
}

// A list row written as its text (run/start_edit.h): `picks` and `start_edits`, both drawn (pixel rows).
template <class T>
SettingField list_row(const char* key, T ViewSettings::*member, std::string (*text)(const T&),
                      T (*parse)(const std::string&, const std::string&)) {
  SettingField f{key, SettingSection::View, {}, true, true, 0, 0, {}, {}, {}};
  f.get = [member, text](const AppSettings& s) { return nlohmann::json(text(s.view.*member)); };
  f.parse = [member, parse](AppSettings& s, const std::string& v, const std::string& arg) { s.view.*member = parse(arg, v); };
  f.load = [member, parse, key](AppSettings& s, const nlohmann::json& v, std::string* note) {
    try {
      if (!v.is_string()) throw InvalidInput("not a string");
      s.view.*member = parse(key, v.get<std::string>());
    } catch (const InvalidInput& e) {
      if (note) *note += std::string("settings: ignored field '") + key + "': " + e.what() + "\n";
    }
  };
  return f;
}

// The comparison grid's rows (SEMANTICS §10 "The grid in the window"): kept in the settings file, not in a single
// view's sidecar (a grid PNG's sidecar carries its spec). grid: the spec's text form; "" or "off" clears it.
void add_grid_rows(std::vector<SettingField>& t) {
  using S = SettingSection;
  {
    SettingField f{"grid", S::View, {}, false, true, 0, 0, {}, {}, {}};
    f.get = [](const AppSettings& s) { return nlohmann::json(s.view.grid); };
    f.parse = [](AppSettings& s, const std::string& v, const std::string& arg) {
      s.view.grid = v.empty() || v == "off" ? "" : grid_spec_text(parse_grid_spec(v, arg));
    };
    f.load = [](AppSettings& s, const nlohmann::json& v, std::string* note) {
      try {
        if (!v.is_string()) throw InvalidInput("not a string");
        const std::string text = v.get<std::string>();
        s.view.grid = text.empty() ? "" : grid_spec_text(parse_grid_spec(text, "grid"));
      } catch (const InvalidInput& e) {
        if (note) *note += std::string("settings: ignored field 'grid': ") + e.what() + "\n";
      }
    };
    t.push_back(f);
  }
  t.push_back(flag("grid_show", S::View, {}, false, [](AppSettings& s) -> bool& { return s.view.grid_show; }));
  t.push_back(choice<std::string>("grid_metric", S::View, false, [](AppSettings& s) -> std::string& { return s.view.grid_metric; },
                                  [](std::string x) { return x; }, [](const std::string& x) {
                                    for (const std::string& n : grid_metric_names())
                                      if (n == x) return x;
                                    throw InvalidInput("grid_metric = '" + x + "' is not a metric; valid: " +
                                                       grid_metric_choices());
                                  }));
  t.push_back(flag("grid_sort", S::View, {}, false, [](AppSettings& s) -> bool& { return s.view.grid_sort; }));
  t.push_back(choice<std::string>("grid_align", S::View, false, [](AppSettings& s) -> std::string& { return s.view.grid_align; },
                                  [](std::string x) { return x; }, [](const std::string& x) {
                                    if (x != "noise" && x != "step")
                                      throw InvalidInput("grid_align = '" + x + "' is not valid; valid: noise, step");
                                    return x;
                                  }));
}

// The view rows: drawing only, never re-simulates.
void add_view_rows(std::vector<SettingField>& t) {
  using S = SettingSection;
  t.push_back(number<int>("trail_frames", S::View, {"trail"}, true, double(kTrailFramesRange.lo), double(kTrailFramesRange.hi),
                          [](AppSettings& s) -> int& { return s.view.trail_frames; }));
  t.push_back(flag("show_data", S::View, {"data"}, true, [](AppSettings& s) -> bool& { return s.view.show_data; }));
  t.push_back(flag("show_field", S::View, {"field"}, true, [](AppSettings& s) -> bool& { return s.view.show_field; }));
  t.push_back(flag("show_axes", S::View, {}, true, [](AppSettings& s) -> bool& { return s.view.show_axes; }));
  t.push_back(choice<FieldQuantity>("field_quantity", S::View, true,
                                    [](AppSettings& s) -> FieldQuantity& { return s.view.field_quantity; },
                                    [](FieldQuantity q) { return std::string(field_quantity_name(q)); },
                                    [](const std::string& v) { return parse_field_quantity(v); }));
  {  // shorthand of the older switch: 1 = x0, 0 = eps (older sidecars and scripts)
    SettingField f{"field_x0", S::View, {}, true, false, 0, 0, {}, {}, {}};  // pixel: sample's --field-x0 too
    f.parse = [](AppSettings& s, const std::string& v, const std::string& arg) {
      s.view.field_quantity = parse_bool(arg, v) ? FieldQuantity::X0 : FieldQuantity::Eps;
    };
    t.push_back(f);
  }
  t.push_back(number<int>("field_grid", S::View, {}, true, 4, 64, [](AppSettings& s) -> int& { return s.view.field_grid; }));
  t.push_back(number<float>("point_size", S::View, {}, true, kPointSizeRange.lo, kPointSizeRange.hi,
                            [](AppSettings& s) -> float& { return s.view.point_size; }));
  t.push_back(number<float>("point_alpha", S::View, {}, true, kPointAlphaRange.lo, kPointAlphaRange.hi,
                            [](AppSettings& s) -> float& { return s.view.point_alpha; }));
  t.push_back(choice<ViewMode>("view_mode", S::View, true, [](AppSettings& s) -> ViewMode& { return s.view.view_mode; },
                              [](ViewMode m) { return std::string(view_mode_name(m)); }, parse_view_mode));
  t.push_back(choice<DrawMode>("draw_mode", S::View, true, [](AppSettings& s) -> DrawMode& { return s.view.draw_mode; },
                              [](DrawMode m) { return std::string(draw_mode_name(m)); }, parse_draw_mode));
  t.push_back(choice<DensityScale>("density_scale", S::View, true,
                                   [](AppSettings& s) -> DensityScale& { return s.view.density_scale; },
                                   [](DensityScale d) { return std::string(d == DensityScale::Log ? "log" : "linear"); },
                                   [](const std::string& v) {
                                     if (v == "log") return DensityScale::Log;
                                     if (v == "linear") return DensityScale::Linear;
                                     throw InvalidInput("density_scale = '" + v + "' is not valid; valid: log, linear");
                                   }));
  t.push_back(number<int>("density_bin_px", S::View, {}, true, double(kDensityBinPxRange.lo), double(kDensityBinPxRange.hi),
                          [](AppSettings& s) -> int& { return s.view.density_bin_px; }));
  t.push_back(flag("density_contours", S::View, {}, true, [](AppSettings& s) -> bool& { return s.view.density_contours; }));
  t.push_back(flag("vsync", S::View, {}, false, [](AppSettings& s) -> bool& { return s.view.vsync; }));
  t.push_back(flag("follow_newest", S::View, {"follow"}, false, [](AppSettings& s) -> bool& { return s.view.follow_newest; }));
  t.push_back(number<float>("play_speed", S::View, {"speed"}, false, kPlaySpeedRange.lo, kPlaySpeedRange.hi,
                            [](AppSettings& s) -> float& { return s.view.play_speed; }));
  t.push_back(flag("loop_resimulate", S::View, {"loop"}, false, [](AppSettings& s) -> bool& { return s.view.loop_resimulate; }));
  t.push_back(number<int>("steps_per_frame", S::View, {}, false, double(kStepsPerFrameRange.lo), double(kStepsPerFrameRange.hi),
                          [](AppSettings& s) -> int& { return s.view.steps_per_frame; }));
  t.push_back(number<int>("image_grid_cols", S::View, {"grid_cols"}, true, double(kGridColsRange.lo), double(kGridColsRange.hi),
                          [](AppSettings& s) -> int& { return s.view.image_grid_cols; }));
  t.push_back(flag("show_ui", S::View, {}, false, [](AppSettings& s) -> bool& { return s.view.show_ui; }));
  // The camera: centre and half the visible height in data units, in a pane of aspect camera_aspect (sidecar).
  t.push_back(number<double>("cam_x", S::View, {}, true, -1e5, 1e5, [](AppSettings& s) -> double& { return s.view.cam_x; }));
  t.push_back(number<double>("cam_y", S::View, {}, true, -1e5, 1e5, [](AppSettings& s) -> double& { return s.view.cam_y; }));
  t.push_back(number<double>("cam_half_h", S::View, {}, true, 1e-3, 1e4, [](AppSettings& s) -> double& { return s.view.cam_half_h; }));
  t.push_back(camera_row());
  t.push_back(flag("cam_auto", S::View, {"camera_auto"}, false, [](AppSettings& s) -> bool& { return s.view.cam_auto; }));
  t.push_back(list_row<std::vector<int>>("picks", &ViewSettings::picks, picks_text, parse_picks));
  t.push_back(list_row<std::vector<StartEdit>>("start_edits", &ViewSettings::start_edits, start_edits_text,
                                               parse_start_edits));
  add_grid_rows(t);
}

// The export rows: the exported picture's size and folder.
void add_export_rows(std::vector<SettingField>& t) {
  using S = SettingSection;
  {
    SettingField f{"export_dir", S::Export, {"dir"}, false, true, 0, 0, {}, {}, {}};
    f.path = [](AppSettings& s) -> std::string& { return s.export_dir; };
    f.parse = [](AppSettings& s, const std::string& v, const std::string&) { s.export_dir = v; };
    t.push_back(f);
  }
  t.push_back(number<int>("export_width", S::Export, {"width"}, true, 16, 16384, [](AppSettings& s) -> int& { return s.export_width; }));
  t.push_back(number<int>("export_height", S::Export, {"height"}, true, 16, 16384, [](AppSettings& s) -> int& { return s.export_height; }));
  {  // shorthand: "WxH"
    SettingField f{"export_size", S::Export, {"size"}, false, false, 0, 0, {}, {}, {}};
    f.parse = [](AppSettings& s, const std::string& v, const std::string& arg) {
      parse_size_wxh(arg, v, &s.export_width, &s.export_height);
    };
    t.push_back(f);
  }
  t.push_back(number<int>("image_grid_scale", S::Export, {}, false, 1, 32, [](AppSettings& s) -> int& { return s.image_grid_scale; }));
  t.push_back(flag("figure", S::Export, {}, true, [](AppSettings& s) -> bool& { return s.figure; }));
}

// The rows in the order values are applied (camera rows before cam_auto).
std::vector<SettingField> make_table() {
  std::vector<SettingField> t;
  add_sampling_rows(t);
  add_view_rows(t);
  add_export_rows(t);
  return t;
}

}  // namespace

const std::vector<SettingField>& setting_fields() {
  static const std::vector<SettingField> table = make_table();
  return table;
}

const SettingField* find_setting(const std::string& key, bool* alias) {
  for (const SettingField& f : setting_fields()) {
    if (key == f.key) {
      if (alias) *alias = false;
      return &f;
    }
    if (std::find(f.aliases.begin(), f.aliases.end(), key) != f.aliases.end()) {
      if (alias) *alias = true;
      return &f;
    }
  }
  return nullptr;
}

std::string setting_key_list() {
  std::string s;
  for (const SettingField& f : setting_fields())
    if (f.parse) s += (s.empty() ? "" : ", ") + std::string(f.key);
  return s;
}

void set_setting(AppSettings& s, const std::string& key, const std::string& text, const std::string& arg_in,
                 std::string* note) {
  const std::string arg = arg_in.empty() ? key : arg_in;
  bool alias = false;
  const SettingField* f = find_setting(key, &alias);
  if (!f || !f->parse) throw InvalidInput(arg + ": unknown setting; valid keys: " + setting_key_list());
  if (alias && note) *note += "note: '" + key + "' is the old name of '" + f->key + "' (SEMANTICS §6)\n";
  f->parse(s, text, arg);
}

std::string setting_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  if (v.is_number()) return v.dump();  // shortest text that reads back exactly
  if (v.is_array()) {
    std::string s;
    for (const auto& e : v) s += (s.empty() ? "" : ",") + setting_text(e);
    return s;
  }
  throw InvalidInput("not a value: " + v.dump());
}

void parse_size_wxh(const std::string& arg, const std::string& text, int* w, int* h, int lo, int hi) {
  int a = 0, b = 0;
  char x = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &a, &x, &b, &extra) != 3 || (x != 'x' && x != 'X' && x != ',') || a < lo ||
      b < lo || a > hi || b > hi)
    throw InvalidInput(arg + " = " + text + " is not valid; want WxH with W and H in [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "], e.g. 1024x1024");
  *w = a;
  *h = b;
}

nlohmann::json settings_to_json(const AppSettings& s) {
  nlohmann::json j = {{"sampling", nlohmann::json::object()}, {"view", nlohmann::json::object()},
                      {"export", nlohmann::json::object()}};
  for (const SettingField& f : setting_fields()) {
    if (!f.persisted) continue;
    if (f.path)
      put_path(j[section_name(f.section)], f.key, f.path(const_cast<AppSettings&>(s)));  // any bytes (SEMANTICS §6)
    else
      j[section_name(f.section)][f.key] = f.get(s);
  }
  return j;
}

AppSettings settings_from_json(const nlohmann::json& j, std::string* note) {
  AppSettings s;
  if (!j.is_object()) {
    if (note) *note += "settings: not a JSON object; using defaults\n";
    return s;
  }
  for (const SettingField& f : setting_fields()) {
    if (!f.persisted) continue;
    const char* sec = section_name(f.section);
    if (!j.contains(sec) || !j[sec].is_object()) continue;
    const nlohmann::json& o = j[sec];
    if (f.path) {
      for (const std::string& k : std::vector<std::string>{f.key, f.aliases.empty() ? "" : f.aliases[0]})
        if (!k.empty() && (o.contains(k) || o.contains(k + "_base64"))) {
          if (!get_path(o, k, &f.path(s)) && note) *note += "settings: ignored ill-typed field '" + k + "'\n";
          break;
        }
      continue;
    }
    if (o.contains(f.key)) {
      f.load(s, o[f.key], note);
      continue;
    }
    for (const std::string& a : f.aliases)  // an older file: read silently, written back with the new key
      if (o.contains(a)) {
        f.load(s, o[a], note);
        break;
      }
  }
  return s;
}

std::vector<std::pair<std::string, const SettingField*>> settings_in_json(const nlohmann::json& flat) {
  std::vector<std::pair<std::string, const SettingField*>> found;
  if (!flat.is_object()) return found;
  for (const SettingField& f : setting_fields()) {
    if (!f.parse) continue;
    std::vector<std::string> names{f.key};
    names.insert(names.end(), f.aliases.begin(), f.aliases.end());
    for (const std::string& k : names)
      if (flat.contains(k)) {
        found.emplace_back(k, &f);  // the first name found (the key before its aliases)
        break;
      }
  }
  return found;
}

std::vector<std::string> apply_settings_json(AppSettings& s, const nlohmann::json& flat, const std::string& arg_prefix,
                                             const std::vector<std::string>& skip, std::string* note) {
  std::vector<std::string> used;
  for (const auto& [k, f] : settings_in_json(flat)) {
    used.push_back(k);
    if (std::find(skip.begin(), skip.end(), f->key) == skip.end())
      set_setting(s, k, setting_text(flat[k]), arg_prefix + k, note);
  }
  return used;
}

bool same_sampling(const SamplingSettings& a, const SamplingSettings& b) {
  AppSettings x, y;
  x.sampling = a, y.sampling = b;
  for (const SettingField& f : setting_fields())
    if (f.section == SettingSection::Sampling && f.get && f.get(x) != f.get(y)) return false;
  return a.model_path == b.model_path;
}

std::string describe_sampling_differences(const SamplingSettings& kept, const SamplingSettings& asked) {
  AppSettings x, y;
  x.sampling = kept, y.sampling = asked;
  auto text = [](const nlohmann::json& v) {
    if (v.is_number_float()) return num_text(v.get<double>());
    if (v.is_boolean()) return std::string(v.get<bool>() ? "on" : "off");
    return setting_text(v);
  };
  std::string out;
  for (const SettingField& f : setting_fields()) {
    if (f.section != SettingSection::Sampling || !f.get) continue;
    const nlohmann::json a = f.get(x), b = f.get(y);
    if (a == b) continue;
    out += (out.empty() ? "" : ", ") + std::string(f.key) + " " + text(a) + " (asked " + text(b) + ")";
  }
  return out;
}

}  // namespace diffscope
