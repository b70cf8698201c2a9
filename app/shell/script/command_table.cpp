// command_table.cpp — the headless script's commands, one entry each, and the help printed from them.
#include "shell/script/script.h"

#include <string>
#include <vector>

#include "base/words.h"

namespace diffscope::shell::script {

constexpr ScriptCommand kCommands[] = {
    {"frames", cmd_frames, "run N UI frames"},
    {"wait_complete", cmd_wait_complete,
     "run frames until the run is complete (at most MAX frames; not complete then: a failed expectation)"},
    {"set", cmd_set,
     "a setting by its key (old names such as spl, trail, data still work, with a note), then one frame; a value "
     "out of its range (for this model) is exit 2"},
    {"restore", cmd_restore, "open an export's .png or .json as if dropped on the window"},
    {"model", cmd_model, "load a bundled model or a .safetensors file; one that does not load is printed, the script "
                         "goes on and the run exits 2"},
    {"backend", cmd_backend, "switch the compute backend"},
    {"key", cmd_key,
     "press and release a key (with its character, as a window types it; with ctrl: none, Ctrl+Z undoes the brush); "
     "an export S / V started that fails "
     "counts as a failed export"},
    {"mouse", cmd_mouse, "move the mouse to (X, Y) pixels and set the left button"},
    {"click", cmd_click, "a left click in the middle of a named item, the KEYs pressed in the same frame (a text "
                         "field takes the keys typed after the click)"},
    {"wheel", cmd_wheel, "turn the mouse wheel at (X, Y) pixels (zooms the 2D view about that point)"},
    {"drag_timeline", cmd_drag_timeline,
     "drag on the timeline slider from FROM to TO (fractions of its width) in FRAMES frames"},
    {"pick", cmd_pick,
     "pick the sample of the shown frame nearest to (X, Y) in the 2D view's data units, as a click there (add: as "
     "Shift+click); none within the pick radius (8 px) is printed and changes nothing"},
    {"pin", cmd_pin, "add sample INDEX to the picks (settings key picks)"},
    {"unpin", cmd_unpin, "remove sample INDEX from the picks (all: every one)"},
    {"move_start", cmd_move_start,
     "start sample INDEX at (X, Y) instead of its start noise (settings key start_edits; a 2D model): only its "
     "trajectory is re-run"},
    {"train_data", cmd_train_data,
     "the training panel's data: brush (the brush's points), bundled NAME (a bundled model's data_samples), npy PATH "
     "(a (N, dim) .npy file); clear: remove the drawn points (one undo step)"},
    {"brush", cmd_brush, "draw N points uniform in the disc of radius R around (X, Y) (data units), one undo step"},
    {"brush_erase", cmd_brush_erase, "erase the drawn points within R of (X, Y), one undo step"},
    {"brush_undo", cmd_brush_undo, "undo the last brush step (as Ctrl+Z)"},
    {"train_set", cmd_train_set, "a training setting (the Train section's): a bad key or value is exit 2"},
    {"train", cmd_train,
     "the training run: start (a refused start prints why and the run exits non-zero), stop, resume, wait (frames "
     "until it ends and the last kept weights' samples are complete; then as print), until STEP (frames until the "
     "run has done STEP steps, then until the view's samples are complete), save [PATH] (the model file and "
     "its checkpoint), checkpoint I (show a kept one; -1: follow the newest), print (one JSON line: steps, losses, "
     "checkpoints)"},
    {"grid", cmd_grid,
     "show the comparison grid of this spec (rows=AXIS:V1,V2 cols=AXIS:V1,...; SEMANTICS §10) in place of the single "
     "view, run at once; off: the single view again. A bad spec, or a cell the run plan refuses, is exit 2"},
    {"grid_metric", cmd_grid_metric, "the metric the grid's cells show, sort and colour by"},
    {"grid_click", cmd_grid_click,
     "as a click on the grid's cell (ROW, COL): its settings become the single view's, the grid hidden"},
    {"grid_export", cmd_grid_export,
     "the grid's cells' shown states as NPY (rows, cols, n, dim) and their metrics as JSON beside it (NPY's name .json)"},
    {"export", cmd_export,
     "an export as the Export section's buttons; video: frames 0 .. the shown one; a failed export prints its "
     "error, the script goes on and the run exits non-zero"},
    {"screenshot", cmd_screenshot, "the whole frame, UI included"},
    {"expect", cmd_expect,
     "compare a quantity with VALUE (readbacks, syncs, camera_fits: since the last reset_counts; exports: run so "
     "far; clipped: the UI's clipped items this frame, listed when it fails); a failed one makes the run exit 2"},
    {"bench", cmd_bench, "run the kernel panel's rows (and print them), open the panel"},
    {"measure", cmd_measure, "frames/s over FRAMES frames (after 10 warm-up frames) with the per-frame figures"},
    {"stop_after", cmd_stop_after, "skip the rest of the script once SECONDS have passed since this line (soak runs)"},
    {"size", cmd_size, "the display size in pixels from now on (0 0: a minimised window)"},
    {"open", cmd_open, "expand a section of the left panel (scrolled into view by the user, not by this), or the "
                       "kernel panel"},
    {"schedule", cmd_schedule, "open the Schedule section (wait: until its exact-ODE errors are computed)"},
    {"scheduler_config", cmd_scheduler_config,
     "apply a diffusers scheduler_config.json as the model section does (no PATH: clear it)"},
    {"reset_counts", cmd_reset_counts, "zero the GPU-wait counters that expect readbacks|syncs|camera_fits read"},
    {"print", cmd_print,
     "one JSON line with the state (gl_errors: GL errors so far; error: the run's error, \"\" when none; "
     "gpu_mem_used_mb; frame_ms and phase_ms: the last finished frame and its phases, which add up to it; counts: "
     "read-backs, syncs and camera fits since reset_counts)"},
};

const ScriptCommand* find_command(const std::string& name) {
  for (const ScriptCommand& c : kCommands)
    if (name == c.name) return &c;
  return nullptr;
}

// "unknown command 'sett' (did you mean 'set'?)" with where the commands are listed.
std::string unknown_command(const std::string& name) {
  std::vector<std::string> names;
  for (const ScriptCommand& c : kCommands) names.push_back(c.name);
  const std::string near = nearest_name(name, names);
  return "unknown command '" + name + "'" + (near.empty() ? "" : " (did you mean '" + near + "'?)") +
         "; the commands: diffscope gui --script-help";
}

}  // namespace diffscope::shell::script

namespace diffscope::shell {

std::string script_help() {
  using script::kCommands;
  using script::ScriptCommand;
  std::string s =
      "diffscope gui --headless --script FILE runs FILE's lines in order, one command a line. Words split at "
      "blanks; a value with blanks goes in double quotes (set export_dir \"/a/my runs\"; \\\" and \\\\ inside "
      "stand for \" and \\); '#' starts a comment. An unknown command, a missing word, a word a command does not "
      "take, a non-number or a number out of its range is exit 2 before the app starts. [X]: optional.\n";
  for (const ScriptCommand& c : kCommands) {
    ScriptArgs d = ScriptArgs::describing(c.name);
    try {
      (void)c.parse(d);
    } catch (const ScriptArgs::Described&) {
    }
    std::string usage = c.name, args;
    for (const ScriptArgSpec& a : d.described()) {
      const size_t paren = a.what.find(" (");
      const std::string name = a.what.substr(0, paren);
      usage += a.optional ? " [" + name + "]" : " " + name;
      std::string what = a.valid.empty() ? "a word" : a.valid;
      if (paren != std::string::npos) what += " " + a.what.substr(paren + 1);
      if (a.optional) what += a.fallback.empty() ? "; optional" : "; default " + a.fallback;
      args += "      " + name + ": " + what + "\n";
    }
    s += "\n  " + usage + "\n      " + c.help + "\n" + args;
  }
  return s;
}

}  // namespace diffscope::shell
