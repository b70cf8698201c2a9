// commands_pick.cpp — the script commands that pick particles and move their starts (SEMANTICS §6 "Picked
// particles and edited starts"): a pick as a click at a point of the 2D view (data units), pins by row index and
// an edited start, each then one frame.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "base/errors.h"
#include "run/start_edit.h"
#include "shell/script/script.h"

namespace diffscope::shell::script {
namespace {

constexpr RealRange kDataRange{-1e5, 1e5};  // a point of the 2D view, data units (the camera's range)

// Applies the picks or the edited starts as their settings row, then one frame.
void set_list(Script& sc, const std::string& key, const std::string& text) {
  sc.act(Action::set_setting(key, text));
  sc.frame();
}

// True when `row` is a sample of the run (n of its settings); otherwise the line fails, naming the index and the
// valid range (`pin` / `move_start` of a row the run does not have would be kept without effect).
bool row_of_run(Script& sc, const char* command, int row) {
  const int n = sc.app.session().settings().n_samples;
  if (row < n) return true;
  const std::string what = std::string(command) + ": INDEX = " + std::to_string(row) + " is not a sample of the run: " +
                           "valid [0, " + std::to_string(n - 1) + "] (n = " + std::to_string(n) + ")";
  std::printf("script:%d: %s\n", sc.line_no, what.c_str());
  sc.failed(what, false);
  return false;
}

}  // namespace

ScriptAction cmd_pick(ScriptArgs& a) {  // pick X Y [add]: as a click (Shift+click with add) at (X, Y) data units
  const double x = a.real("X", kDataRange), y = a.real("Y", kDataRange);
  const bool add = a.choice_or("MODE (add: Shift+click)", {"only", "add"}, "only") == "add";
  a.end();
  return [x, y, add](Script& sc) {
    sc.act(Action::pick(x, y, add));
    std::printf("script:%d: %s\n", sc.line_no, sc.app.last_outcome().note.c_str());
    sc.frame();
  };
}

ScriptAction cmd_pin(ScriptArgs& a) {  // pin INDEX: add a row to the picks
  const int row = int(a.integer("INDEX", kPickRowRange));
  a.end();
  return [row](Script& sc) {
    if (!row_of_run(sc, "pin", row)) return;
    std::vector<int> picks = sc.app.settings().view.picks;
    if (std::find(picks.begin(), picks.end(), row) == picks.end()) picks.push_back(row);
    set_list(sc, "picks", picks_text(picks));
  };
}

ScriptAction cmd_unpin(ScriptArgs& a) {  // unpin INDEX|all
  const std::string w = a.word("INDEX (a row, or all)");
  a.end();
  int row = -1;
  if (w != "all") {
    if (w.empty() || w.size() > 7 || w.find_first_not_of("0123456789") != std::string::npos ||
        !kPickRowRange.contains(row = std::stoi(w)))
      throw InvalidInput("unpin INDEX = '" + w + "' is not a row in [0, " + std::to_string(kPickRowRange.hi) +
                         "] or all");
  }
  return [row](Script& sc) {
    std::vector<int> picks = sc.app.settings().view.picks;
    if (row < 0) picks.clear();
    else picks.erase(std::remove(picks.begin(), picks.end(), row), picks.end());
    set_list(sc, "picks", picks_text(picks));
  };
}

ScriptAction cmd_move_start(ScriptArgs& a) {  // move_start INDEX X Y: row INDEX starts at (X, Y) (2D models)
  const int row = int(a.integer("INDEX", kPickRowRange));
  const double x = a.real("X", kDataRange), y = a.real("Y", kDataRange);
  a.end();
  return [row, x, y](Script& sc) {
    if (const int dim = sc.app.session().dim(); dim != 2) {  // a start is moved in a 2D model's own space only
      std::printf("script:%d: move_start: the model has dim %d; a start is moved on 2D models only\n", sc.line_no, dim);
      sc.failed("move_start: the model has dim " + std::to_string(dim) + "; a start is moved on 2D models only", false);
      return;
    }
    if (!row_of_run(sc, "move_start", row)) return;
    set_list(sc, "start_edits",
             start_edits_text(with_start_edit(sc.app.settings().view.start_edits, row, {float(x), float(y)})));
  };
}

}  // namespace diffscope::shell::script
