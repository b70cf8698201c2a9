// gui_command.cpp — `diffscope gui`: the desktop app (GLFW window), or `--headless` (EGL offscreen,
// optionally driven by a --script). Also what runs when no subcommand is given.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "base/errors.h"
#include "base/words.h"
#include "cli/cli.h"
#include "picture/restore.h"
#include "platform/model_paths.h"
#include "platform/stop_signal.h"
#include "session/settings_keys.h"
#include "session/settings_schema.h"
#include "shell/compute_select.h"
#include "shell/run.h"

namespace diffscope::cli {

namespace {
struct GuiOptions {
  std::string model, backend = "", script, size, screenshot, config_dir, restore;
  std::string file;  // the positional FILE: a model, or an export's .png / .json (then as --restore)
  bool headless = false, no_persist = false, script_help = false;
  std::vector<std::string> sets;
  std::string n, steps, t_start;  // text: checked with the --set values (session/settings_keys.h)
  int frames = 0;
};

void parse_size(const std::string& s, int* w, int* h) {
  if (!s.empty()) parse_size_wxh("--size", s, w, h);  // session/settings_schema.h: the one WxH parser
}
// --restore: the sidecar's model (unless --model is given) and settings, applied before any --set.
void restore_into(const std::string& file, ui::AppOptions* ao) {
  std::string note;
  const nlohmann::json j = read_sidecar(file, &note, "--restore");
  RestorePlan plan = plan_restore(j);
  note += plan.note;
  if (ao->model.empty()) ao->model = plan.model;
  ao->frame = plan.frame;
  ao->camera_aspect = plan.camera_aspect;
  std::vector<ui::SettingOverride> restored;
  for (const auto& [key, value] : plan.sets) restored.push_back({key, value, "--restore " + file + ": " + key});
  ao->sets.insert(ao->sets.begin(), restored.begin(), restored.end());
  if (!note.empty()) std::fprintf(stderr, "diffscope: restore: %s", note.c_str());
}

// The subcommand's options and flags, written into `o`.
void add_gui_options(CLI::App* sub, GuiOptions& o) {
  sub->add_option("--model", o.model, "bundled model name (moons, digits8x8, ...) or .safetensors path");
  sub->add_option("--backend", o.backend, "auto | cpu | cuda (this run only; default: the saved setting, else auto)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  sub->add_flag("--headless", o.headless, "no window: render offscreen through EGL (needs no display); without --script it runs until the "
                    "first run completes and prints the state as JSON (add --screenshot out.png for a picture)");
  sub->add_option("--script", o.script, "headless: a script of UI input and commands (the commands: --script-help)");
  sub->add_flag("--script-help", o.script_help, "print the headless script's commands, their arguments and ranges, and exit");
  sub->add_option("--size", o.size, "window or offscreen size WxH");
  sub->add_option("--frames", o.frames, "window: close after this many frames, in [1, 1000000000] (smoke tests)")
      ->check(CLI::Range(1, 1'000'000'000));
  sub->add_option("--screenshot", o.screenshot, "write the last frame, UI included: .png, or .jpg / .jpeg (JPEG)")
      ->check([](const std::string& v) { return v.empty() ? std::string("is empty; valid: a .png, .jpg or .jpeg path") : ""; });
  sub->add_option("--n", o.n, "number of samples, in [1, 1000000] (this run only)")->type_name("INT");
  sub->add_option("--steps", o.steps, "steps N, in [1, t_start+1] (this run only)")->type_name("INT");
  sub->add_option("--t-start", o.t_start, "start timestep, in [0, T-1] (this run only)")->type_name("INT");
  sub->add_option("--set", o.sets, "KEY=VALUE setting for this run (repeatable): " + setting_keys() +
                                       "; out-of-range values are refused (app/base/ranges.h)");
  sub->add_option("--restore", o.restore, "open the model and settings of an export: its .png (text chunk) or "
                                          ".json sidecar (picture/restore.h); --model and --set still win");
  sub->add_option("file", o.file, "FILE: a model (.safetensors; as --model) or an export's .png / .json sidecar "
                                  "(as --restore): what a file manager's \"Open with\" passes");
  sub->add_flag("--no-persist", o.no_persist, "do not read or write the settings in the config folder");
  sub->add_option("--config-dir", o.config_dir, "settings folder (default $XDG_CONFIG_HOME/diffscope)");
}

// The app's options from the command line: FILE as --model or --restore, the sidecar's settings, then --n, --steps,
// --t-start and --set, each checked before a window or an EGL context is made. Throws InvalidInput.
ui::AppOptions app_options(GuiOptions& o) {
  if (!o.file.empty()) {  // FILE: an export to restore (by its extension, as a dropped file) or a model
    std::string& slot = is_restore_file(o.file) ? o.restore : o.model;
    const char* flag = is_restore_file(o.file) ? "--restore" : "--model";
    if (!slot.empty())
      throw InvalidInput("FILE '" + o.file + "' and " + flag + " '" + slot + "' both name the " +
                         (is_restore_file(o.file) ? "export to restore" : "model") + "; valid: one of them");
    slot = o.file;
  }
  if (o.backend == "cuda" && !shell::cuda_available())  // asked for by name: as `sample --backend cuda`
    throw ResourceUnavailable("--backend cuda: no CUDA device is usable here; use --backend cpu (or auto)");
  ui::AppOptions ao;
  ao.model = o.model;
  ao.backend = o.backend;
  ao.headless = o.headless;
  ao.config_dir = o.config_dir;
  ao.persist = !o.no_persist && !(o.headless && o.config_dir.empty());  // headless persists only when asked
  if (!o.n.empty()) ao.sets.push_back({"n", o.n, "--n"});
  if (!o.steps.empty()) ao.sets.push_back({"steps", o.steps, "--steps"});
  if (!o.t_start.empty()) ao.sets.push_back({"t_start", o.t_start, "--t-start"});
  if (!o.restore.empty()) restore_into(o.restore, &ao);
  for (const std::string& kv : o.sets) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InvalidInput("--set " + kv + ": want KEY=VALUE; keys: " + setting_keys());
    ao.sets.push_back({kv.substr(0, eq), kv.substr(eq + 1), "--set " + kv.substr(0, eq)});
  }
  // Checked before a window or an EGL context is made (the app applies them again, with the model's ranges).
  AppSettings probe;
  for (const ui::SettingOverride& s : ao.sets) apply_setting(probe, s.key, s.value, s.arg);
  if (o.headless && !ao.model.empty())  // headless: a mistyped name is exit 2 (the window shows the default)
    (void)resolve_model_arg("--model", ao.model);
  return ao;
}

// `gui --headless`: the script (or one run) offscreen; a failed command or expectation is exit 2, or 3 when a
// resource was missing (SEMANTICS §9).
void run_headless_gui(const GuiOptions& o, const ui::AppOptions& ao) {
  shell::HeadlessOptions ho;
  parse_size(o.size, &ho.width, &ho.height);
  ho.script = o.script;
  ho.screenshot = o.screenshot;
  const StopSignalScope stop;  // SIGINT / SIGTERM end the script cleanly (exit 130 / 143)
  const shell::HeadlessResult r = shell::run_headless(ao, ho);
  const std::string what = o.script.empty() ? std::string("gui --headless") : "--script " + o.script;
  if (r.failed_commands > 0) {
    const std::string m = what + ": " + count_noun(r.failed_commands, "command") + " failed, the first: " +
                          r.first_failure +
                          (r.failed_expects ? "; " + count_noun(r.failed_expects, "expectation") + " failed too" : "");
    if (r.unavailable) throw ResourceUnavailable(m);
    throw InvalidInput(m);
  }
  if (r.failed_expects > 0)
    throw InvalidInput(o.script.empty() ? what + ": the run did not complete"
                                        : what + ": " + count_noun(r.failed_expects, "expectation") +
                                              " failed (the lines above)");
}

// `gui`: the desktop window.
void run_window_gui(const GuiOptions& o, const ui::AppOptions& ao) {
  if (!o.script.empty()) throw InvalidInput("--script needs --headless");
  shell::WindowOptions wo;
  parse_size(o.size, &wo.width, &wo.height);
  wo.size_given = !o.size.empty();
  wo.max_frames = o.frames;
  wo.screenshot = o.screenshot;
  shell::run_window(ao, wo);
}

}  // namespace

void register_gui(CLI::App& app, Action& action) {
  auto o = std::make_shared<GuiOptions>();
  CLI::App* sub = app.add_subcommand("gui", "open the desktop app (the default when no subcommand is given)");
  add_gui_options(sub, *o);
  sub->callback([o, &action] {
    action = [o] {
      if (o->script_help) {
        std::fputs(shell::script_help().c_str(), stdout);
        return;
      }
      const ui::AppOptions ao = app_options(*o);
      if (o->headless)
        run_headless_gui(*o, ao);
      else
        run_window_gui(*o, ao);
    };
  });
}

}  // namespace diffscope::cli
