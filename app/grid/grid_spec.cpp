// grid_spec.cpp — parsing and writing the comparison grid's spec (grid_spec.h).
#include "grid/grid_spec.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "base/errors.h"
#include "base/words.h"
#include "base/precision.h"
#include "diffusion/step_table.h"
#include "formats/json_bounded.h"
#include "formats/png_text.h"
#include "platform/file_read.h"

namespace diffscope {
namespace {

struct AxisInfo {
  GridAxis axis;
  const char* name;
  bool numeric;  // written as JSON numbers
};
constexpr AxisInfo kAxes[] = {{GridAxis::Sampler, "sampler", false}, {GridAxis::Steps, "steps", true},
                              {GridAxis::Spacing, "spacing", false}, {GridAxis::Eta, "eta", true},
                              {GridAxis::Precision, "precision", false}, {GridAxis::Model, "model", false},
                              {GridAxis::TStart, "t_start", true}, {GridAxis::GuidanceScale, "guidance_scale", true}};

bool parse_int(const std::string& v, long long lo, long long* out) {
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 12) return false;
  *out = std::stoll(v);
  return *out >= lo;
}

// InvalidInput naming the dimension, axis and value, with what is valid.
InvalidInput bad_value(const std::string& arg, const char* dim, GridAxis a, const std::string& v, const std::string& valid) {
  return InvalidInput(arg + ": " + dim + "=" + grid_axis_name(a) + " value '" + v + "' is not valid; valid: " + valid);
}

// Refuses a value that is not of its axis's kind (grid_spec.h).
void check_value(const std::string& arg, const char* dim, GridAxis a, const std::string& v) {
  long long i = 0;
  switch (a) {
    case GridAxis::Sampler:
      for (const std::string& s : sampler_names()) if (s == v) return;
      throw bad_value(arg, dim, a, v, sampler_choices());
    case GridAxis::Spacing:
      for (const std::string& s : spacing_names()) if (s == v) return;
      throw bad_value(arg, dim, a, v, spacing_choices());
    case GridAxis::Precision:
      for (Precision p : {Precision::Fp32, Precision::Tf32, Precision::Bf16, Precision::F16})
        if (v == precision_name(p)) return;
      throw bad_value(arg, dim, a, v, precision_names());
    case GridAxis::Steps:
      if (parse_int(v, 1, &i) && i <= 1000000) return;
      throw bad_value(arg, dim, a, v, "an integer in [1, t_start + 1]");
    case GridAxis::TStart:
      if (parse_int(v, 0, &i) && i <= 1000000) return;
      throw bad_value(arg, dim, a, v, "an integer in [0, T - 1]");
    case GridAxis::Eta: {
      char* end = nullptr;
      errno = 0;
      const double e = v.empty() ? NAN : std::strtod(v.c_str(), &end);
      if (end && *end == 0 && errno == 0 && e >= 0.0 && e <= 1.0) return;
      throw bad_value(arg, dim, a, v, "a real in [0, 1]");
    }
    case GridAxis::GuidanceScale: {
      char* end = nullptr;
      errno = 0;
      const double w = v.empty() ? NAN : std::strtod(v.c_str(), &end);
      if (end && *end == 0 && errno == 0 && w >= kMinGuidanceScale && w <= kMaxGuidanceScale) return;
      throw bad_value(arg, dim, a, v, "a real in [" + round_trip_number(kMinGuidanceScale) + ", " +
                                          round_trip_number(kMaxGuidanceScale) + "]");
    }
    case GridAxis::Model:
      if (!v.empty()) return;
      throw bad_value(arg, dim, a, v, "a bundled model name or a .safetensors path");
    case GridAxis::None: break;
  }
}

GridAxis parse_axis(const std::string& arg, const char* dim, const std::string& name) {
  for (const AxisInfo& x : kAxes)
    if (name == x.name) return x.axis;
  throw InvalidInput(arg + ": " + dim + " axis '" + name + "' is not an axis; valid: " + grid_axis_choices());
}

// Two values of one axis that are the same setting: the same text, or the same number on a numeric axis.
bool same_value(GridAxis axis, const std::string& a, const std::string& b) {
  if (a == b) return true;
  if (axis != GridAxis::Steps && axis != GridAxis::Eta && axis != GridAxis::TStart) return false;
  return std::strtod(a.c_str(), nullptr) == std::strtod(b.c_str(), nullptr);
}

GridLine make_line(const std::string& arg, const char* dim, GridAxis axis, std::vector<std::string> values) {
  if (values.empty())
    throw InvalidInput(arg + ": " + dim + "=" + grid_axis_name(axis) + " has no values; valid: 1 to " +
                       std::to_string(kMaxGridValues) + " values");
  if (values.size() > static_cast<size_t>(kMaxGridValues))
    throw InvalidInput(arg + ": " + dim + "=" + grid_axis_name(axis) + " has " + std::to_string(values.size()) +
                       " values; valid: 1 to " + std::to_string(kMaxGridValues));
  for (size_t i = 0; i < values.size(); ++i) {
    check_value(arg, dim, axis, values[i]);
    for (size_t k = 0; k < i; ++k)
      if (same_value(axis, values[k], values[i]))
        throw InvalidInput(arg + ": " + dim + "=" + grid_axis_name(axis) + " value '" + values[i] +
                           "' is given twice" + (values[k] == values[i] ? "" : " (as '" + values[k] + "')") +
                           "; valid: distinct values");
  }
  return {axis, std::move(values)};
}

void check_axes(const GridSpec& s, const std::string& arg) {
  if (s.rows.axis == GridAxis::None && s.cols.axis == GridAxis::None)
    throw InvalidInput(arg + ": names no axis; valid: rows=AXIS:V1,V2,... and/or cols=AXIS:V1,..., AXIS one of " +
                       grid_axis_choices());
  if (s.rows.axis == s.cols.axis)
    throw InvalidInput(arg + ": the axis '" + std::string(grid_axis_name(s.rows.axis)) +
                       "' is both rows and cols; valid: two different axes");
}

GridSpec parse_text(const std::string& text, const std::string& arg) {
  GridSpec s;
  bool rows_seen = false, cols_seen = false;
  for (const std::string& part : split(text, ' ')) {
    if (part.empty()) continue;
    const size_t eq = part.find('='), colon = part.find(':');
    const std::string dim = part.substr(0, eq);
    if (eq == std::string::npos || (dim != "rows" && dim != "cols"))
      throw InvalidInput(arg + ": '" + part + "' is not valid; valid: rows=AXIS:V1,V2,... cols=AXIS:V1,...");
    bool& seen = dim == "rows" ? rows_seen : cols_seen;
    if (seen) throw InvalidInput(arg + ": " + dim + " is given twice; valid: rows= and cols= once each");
    seen = true;
    if (colon == std::string::npos || colon < eq)
      throw InvalidInput(arg + ": '" + part + "' has no values; valid: " + dim + "=AXIS:V1,V2,...");
    const GridAxis axis = parse_axis(arg, dim.c_str(), part.substr(eq + 1, colon - eq - 1));
    const std::string list = part.substr(colon + 1);
    (dim == "rows" ? s.rows : s.cols) =
        make_line(arg, dim.c_str(), axis, list.empty() ? std::vector<std::string>{} : split(list, ','));
  }
  check_axes(s, arg);
  return s;
}

GridSpec parse_file(const std::string& path, const std::string& arg) {
  const std::string where = arg + " @" + path;
  nlohmann::json j;
  try {
    const bool png = path.size() > 4 && path.compare(path.size() - 4, 4, ".png") == 0;
    if (png) {
      const std::optional<std::string> text = read_png_text(path, "diffscope", where);
      if (!text) throw InvalidInput(where + " carries no sidecar; valid: a grid PNG written by sample --grid --png");
      j = parse_json_bounded(*text);
      if (!j.is_object() || !j.contains("grid") || !j["grid"].is_object() || !j["grid"].contains("spec"))
        throw InvalidInput(where + "'s sidecar holds no grid; valid: a grid PNG written by sample --grid --png");
      j = j["grid"]["spec"];
    } else {
      j = parse_json_bounded(read_file_bytes(path, where, "grid spec file"));
      // a grid PNG's sidecar beside it: its spec
      if (j.is_object() && j.contains("kind") && j["kind"] == "grid" && j.contains("grid") && j["grid"].is_object() &&
          j["grid"].contains("spec"))
        j = j["grid"]["spec"];
    }
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInput(where + " is not valid JSON: " + e.what());
  } catch (const std::runtime_error& e) {
    if (dynamic_cast<const InvalidInput*>(&e)) throw;
    throw InvalidInput(where + ": " + e.what());
  }
  return grid_spec_from_json(j, where);
}

}  // namespace

const char* grid_axis_name(GridAxis a) {
  for (const AxisInfo& x : kAxes)
    if (x.axis == a) return x.name;
  return "none";
}

const char* grid_axis_choices() { return "sampler, steps, spacing, eta, precision, model, t_start, guidance_scale"; }

GridSpec parse_grid_spec(const std::string& text, const std::string& arg) {
  if (!text.empty() && text[0] == '@') return parse_file(text.substr(1), arg);
  return parse_text(text, arg);
}

GridSpec grid_spec_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw InvalidInput(where + ": the spec is not a JSON object; valid: {\"rows\": {...}, \"cols\": {...}}");
  GridSpec s;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string dim = it.key();
    const nlohmann::json& d = it.value();
    if (dim != "rows" && dim != "cols") throw InvalidInput(where + ": key '" + dim + "' is not valid; valid: rows, cols");
    if (!d.is_object() || !d.contains("axis") || !d["axis"].is_string() || !d.contains("values") || !d["values"].is_array())
      throw InvalidInput(where + ": " + dim + " is not valid; valid: {\"axis\": NAME, \"values\": [...]}");
    const GridAxis axis = parse_axis(where, dim.c_str(), d["axis"].get<std::string>());
    std::vector<std::string> values;
    for (const nlohmann::json& v : d["values"]) {
      if (v.is_string()) values.push_back(v.get<std::string>());
      else if (v.is_number_integer() || v.is_number_unsigned()) values.push_back(std::to_string(v.get<long long>()));
      else if (v.is_number()) values.push_back(round_trip_number(v.get<double>()));
      else throw bad_value(where, dim.c_str(), axis, v.dump(), "a string or a number");
    }
    (dim == "rows" ? s.rows : s.cols) = make_line(where, dim.c_str(), axis, std::move(values));
  }
  check_axes(s, where);
  return s;
}

nlohmann::json grid_spec_json(const GridSpec& spec) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [dim, line] : {std::pair<const char*, const GridLine*>{"rows", &spec.rows}, {"cols", &spec.cols}}) {
    if (line->axis == GridAxis::None) continue;
    nlohmann::json values = nlohmann::json::array();
    const bool real = line->axis == GridAxis::Eta || line->axis == GridAxis::GuidanceScale;
    const bool numeric = real || line->axis == GridAxis::Steps || line->axis == GridAxis::TStart;
    for (const std::string& v : line->values) {
      if (!numeric) values.push_back(v);
      else if (real) values.push_back(std::strtod(v.c_str(), nullptr));
      else values.push_back(std::stoll(v));
    }
    j[dim] = {{"axis", grid_axis_name(line->axis)}, {"values", values}};
  }
  return j;
}

std::string grid_spec_text(const GridSpec& spec) {
  std::string t;
  for (const auto& [dim, line] : {std::pair<const char*, const GridLine*>{"rows", &spec.rows}, {"cols", &spec.cols}}) {
    if (line->axis == GridAxis::None) continue;
    t += std::string(t.empty() ? "" : " ") + dim + "=" + grid_axis_name(line->axis) + ":";
    for (size_t i = 0; i < line->values.size(); ++i) t += (i ? "," : "") + line->values[i];
  }
  return t;
}

std::string grid_label(const GridLine& line, int i) {
  if (line.axis == GridAxis::None) return "";
  return std::string(grid_axis_name(line.axis)) + "=" + line.values[static_cast<size_t>(i)];
}

void apply_grid_value(SampleRequest& r, std::string& model, GridAxis axis, const std::string& v) {
  switch (axis) {
    case GridAxis::Sampler: r.sampler = parse_sampler(v); break;
    case GridAxis::Steps: r.steps = std::stoll(v); break;
    case GridAxis::Spacing: r.spacing = parse_spacing(v); break;
    case GridAxis::Eta: r.eta = std::strtod(v.c_str(), nullptr), r.eta_named = true; break;
    case GridAxis::Precision: r.precision = parse_precision(v); break;
    case GridAxis::Model: model = v; break;
    case GridAxis::TStart: r.t_start = std::stoll(v); break;
    case GridAxis::GuidanceScale: r.guidance.scale = std::strtod(v.c_str(), nullptr); break;
    case GridAxis::None: break;
  }
}

const std::vector<std::string>& grid_metric_names() {
  static const std::vector<std::string> names{"energy",       "exact_rms",   "displacement", "path_length",
                                              "straightness", "evaluations", "wall_ms"};
  return names;
}

std::string grid_metric_choices() {
  std::string s;
  for (const std::string& n : grid_metric_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace diffscope
