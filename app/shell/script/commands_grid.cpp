// commands_grid.cpp — the script commands of the comparison grid (SEMANTICS §10 "The grid in the window"): show a
// grid, hide it, the metric its cells show, a click on a cell, and its cells' states and metrics written to files.
#include <cstdio>
#include <string>
#include <vector>

#include "base/errors.h"
#include "formats/npy.h"
#include "grid/grid_live.h"
#include "grid/grid_spec.h"
#include "platform/atomic_write.h"
#include "shell/script/script.h"

namespace diffscope::shell::script {
namespace {

constexpr IntRange kCellIndexRange{0, kMaxGridValues - 1};

// The grid's own failure (a cell the run plan refuses, a model that does not load): a failed line (exit 2).
void check_grid(Script& sc, const std::string& what) {
  if (sc.app.grid_error().empty()) return;
  std::printf("script:%d: %s: %s\n", sc.line_no, what.c_str(), sc.app.grid_error().c_str());
  sc.failed(what + ": " + sc.app.grid_error(), false);
}

}  // namespace

ScriptAction cmd_grid(ScriptArgs& a) {  // grid rows=AXIS:V,... cols=AXIS:V,... | grid off
  std::string text = a.word("rows=AXIS:V1,V2,... cols=AXIS:V1,... (or off)");
  while (a.more()) text += " " + a.word("cols=AXIS:V1,...");
  a.end();
  const bool off = text == "off";
  if (!off && !a.describing()) text = grid_spec_text(parse_grid_spec(text, "grid"));  // refused before the app starts
  return [text, off](Script& sc) {
    if (!off) sc.act(Action::set_setting("grid", text));
    sc.act(Action::set_setting("grid_show", off ? "0" : "1"));
    sc.frame();
    if (!off) check_grid(sc, "grid " + text);
  };
}

ScriptAction cmd_grid_metric(ScriptArgs& a) {  // grid_metric NAME
  const std::string name = a.choice("NAME", grid_metric_names());
  a.end();
  return [name](Script& sc) {
    sc.act(Action::set_setting("grid_metric", name));
    sc.frame();
  };
}

ScriptAction cmd_grid_click(ScriptArgs& a) {  // grid_click ROW COL: as a click on that cell
  const int r = int(a.integer("ROW", kCellIndexRange)), c = int(a.integer("COL", kCellIndexRange));
  a.end();
  return [r, c](Script& sc) {
    const GridLive& g = sc.app.grid();
    const int rows = g.has_grid() ? g.plan().spec.n_rows() : 0, cols = g.has_grid() ? g.plan().spec.n_cols() : 0;
    if (!sc.app.grid_shown() || r >= rows || c >= cols) {
      const std::string why = !sc.app.grid_shown() ? "no grid is shown"
                                                   : "grid_click ROW COL = " + std::to_string(r) + " " + std::to_string(c) +
                                                         " is not a cell; valid: ROW in [0, " + std::to_string(rows - 1) +
                                                         "], COL in [0, " + std::to_string(cols - 1) + "]";
      std::printf("script:%d: %s\n", sc.line_no, why.c_str());
      sc.failed(why, false);
      return;
    }
    sc.act(Action::grid_click(r * cols + c));
    std::printf("script:%d: %s\n", sc.line_no, sc.app.last_outcome().note.c_str());
    sc.frame();
  };
}

ScriptAction cmd_grid_export(ScriptArgs& a) {  // grid_export NPY: the cells' shown states; NPY's .json: the metrics
  const std::string path = a.word("NPY");
  a.end();
  return [path](Script& sc) {
    const GridLive& g = sc.app.grid();
    if (!sc.app.grid_shown() || !g.has_grid()) {
      std::printf("script:%d: grid_export: no grid is shown\n", sc.line_no);
      sc.failed("grid_export: no grid is shown", false);
      return;
    }
    const GridPlan& p = g.plan();
    const size_t cell = static_cast<size_t>(p.n) * p.dim;
    std::vector<float> x(cell * g.cells());
    GridResult shown = g.result();
    shown.position = GridPosition{sc.app.grid_position(), sc.app.grid_align()};
    for (int i = 0; i < g.cells(); ++i) {
      const float* s = g.state_at(i, sc.app.grid_position(), sc.app.grid_align(), &shown.metrics[i].frame);
      std::copy(s, s + cell, x.begin() + static_cast<std::ptrdiff_t>(cell * i));
    }
    const std::string json_path = path.substr(0, path.rfind('.')) + ".json";
    try {
      AtomicFileSet files;
      add_npy_float(files, path, {p.spec.n_rows(), p.spec.n_cols(), p.n, p.dim}, x.data(), "grid_export");
      files.add(json_path, "grid_export", grid_metrics_json(p, shown).dump(2) + "\n");
      files.commit();
      std::printf("script:%d: grid_export: wrote %s and %s\n", sc.line_no, path.c_str(), json_path.c_str());
    } catch (const std::exception& e) {
      std::printf("script:%d: grid_export: %s\n", sc.line_no, e.what());
      sc.failed(std::string("grid_export: ") + e.what(), false);
    }
  };
}

}  // namespace diffscope::shell::script
