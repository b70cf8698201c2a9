// commands_train.cpp — the script commands of the training panel (SEMANTICS §11 "The training panel"): the data
// source, the brush (add, erase, undo), the run's settings, and the run itself (start, stop, resume, wait, save,
// the checkpoint shown), each as the panel's widgets push them, then one frame.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "base/errors.h"
#include "base/words.h"
#include "shell/script/script.h"

namespace diffscope::shell::script {
namespace {

constexpr RealRange kDataRange{-1e5, 1e5};  // a point of the 2D view, data units
constexpr RealRange kRadiusRange{1e-6, 1e5};

// Applies a training action; a refused one prints its message and fails the line (the run exits non-zero).
void train_act(Script& sc, Action a, const std::string& what) {
  sc.act(std::move(a));
  const ActionOutcome& o = sc.app.last_outcome();
  if (!o.note.empty()) std::printf("script:%d: %s%s\n", sc.line_no, o.ok ? "" : "error: ", o.note.c_str());
  if (!o.ok) sc.failed(what + ": " + o.note, false);
  sc.frame();
}

// The training run's state as one JSON line: steps, the first and last losses (means of up to 20 steps), the
// wall time, and the kept checkpoints' steps.
void print_train(Script& sc) {
  const TrainingSession& t = sc.app.training();
  const TrainingSession::Progress p = t.progress();
  const std::vector<float> loss = t.losses();
  auto mean = [&](size_t lo, size_t hi) {
    double s = 0;
    for (size_t k = lo; k < hi; ++k) s += loss[k];
    return hi > lo ? s / double(hi - lo) : 0.0;
  };
  const size_t m = std::min<size_t>(20, loss.size());
  std::string ck;
  for (int64_t s : t.checkpoint_steps()) ck += (ck.empty() ? "" : ",") + std::to_string(s);
  std::printf("script:%d: {\"train\": {\"step\": %lld, \"total\": %lld, \"loss_first\": %.6g, \"loss_last\": %.6g, "
              "\"seconds\": %.3f, \"checkpoints\": [%s], \"ideal_samples\": %zu, \"brush_points\": %lld, "
              "\"error\": %s}}\n",
              sc.line_no, (long long)p.step, (long long)p.total, mean(0, m), mean(loss.size() - m, loss.size()),
              p.seconds, ck.c_str(), t.ideal().size() / std::max(1, t.has_data() ? t.data().dim : 1),
              (long long)t.brush().size(), json_string(p.error).c_str());
}

// Frames until the run has ended, its newest EMA weights are in the main view and their run is complete.
void wait_train(Script& sc, int max) {
  App& app = sc.app;
  int k = 0;
  for (; k < max && app.training().running(); ++k) {
    sc.frame();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // headless frames are fast: leave the cores to it
  }
  sc.frame();  // the last kept weights into the view
  for (; k < max && !app.session().complete() && app.session().error().empty(); ++k) sc.frame();
  if (app.training().running() || !app.session().complete()) {
    std::printf("script:%d: train wait: not done after %s\n", sc.line_no, count_noun(max, "frame").c_str());
    ++sc.result.failed_expects;
  }
  print_train(sc);
}

}  // namespace

ScriptAction cmd_train_data(ScriptArgs& a) {  // train_data brush | bundled NAME | npy PATH | clear
  const std::string kind = a.choice("SOURCE", {"brush", "bundled", "npy", "clear"});
  const std::string value = kind == "bundled" || kind == "npy" ? a.word("NAME or PATH") : "";
  a.end();
  return [kind, value](Script& sc) {
    if (kind == "clear") return train_act(sc, Action::train("brush_clear"), "train_data");
    sc.act(Action::train("set:source", kind));
    if (!value.empty()) train_act(sc, Action::train(kind == "npy" ? "set:npy" : "set:bundled", value), "train_data");
    else sc.frame();
  };
}

ScriptAction cmd_brush(ScriptArgs& a) {  // brush X Y R N: N points uniform in the disc
  const double x = a.real("X", kDataRange), y = a.real("Y", kDataRange), r = a.real("R", kRadiusRange);
  const int n = int(a.integer("N", {1, 100000}));
  a.end();
  return [=](Script& sc) {
    char v[96];
    std::snprintf(v, sizeof v, "%.17g,%.17g,%.17g", x, y, r);
    train_act(sc, Action::train("brush_add", v, n), "brush");
  };
}

ScriptAction cmd_brush_erase(ScriptArgs& a) {  // brush_erase X Y R
  const double x = a.real("X", kDataRange), y = a.real("Y", kDataRange), r = a.real("R", kRadiusRange);
  a.end();
  return [=](Script& sc) {
    char v[96];
    std::snprintf(v, sizeof v, "%.17g,%.17g,%.17g", x, y, r);
    train_act(sc, Action::train("brush_erase", v), "brush_erase");
  };
}

ScriptAction cmd_brush_undo(ScriptArgs& a) {  // brush_undo: as Ctrl+Z
  a.end();
  return [](Script& sc) { train_act(sc, Action::train("brush_undo"), "brush_undo"); };
}

ScriptAction cmd_train_set(ScriptArgs& a) {  // train_set KEY VALUE (checked before the app starts)
  std::string keys;
  for (const std::string& k : train_setting_keys()) keys += (keys.empty() ? "" : ", ") + k;
  const std::string key = a.word("KEY (" + keys + ")"), value = a.word("VALUE");
  a.end();
  if (!a.describing()) {
    TrainSettings scratch;
    set_train_setting(scratch, key, value);  // InvalidInput: exit 2 before the app starts
  }
  return [key, value](Script& sc) { train_act(sc, Action::train("set:" + key, value), "train_set"); };
}

namespace {

// Frames until the run has done `step` steps (or ended), then until that preview's samples are complete.
void train_until(Script& sc, int64_t step) {
  App& app = sc.app;
  for (int k = 0; k < 1000000 && app.training().running() && app.training().progress().step < step; ++k) {
    sc.frame();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  sc.frame();
  for (int k = 0; k < 100000 && !app.session().complete() && app.session().error().empty(); ++k) sc.frame();
}

}  // namespace

ScriptAction cmd_train(ScriptArgs& a) {  // train start | stop | resume | wait [MAX] | until STEP | save [PATH] | ...
  const std::string what =
      a.choice("WHAT", {"start", "stop", "resume", "wait", "until", "save", "checkpoint", "print"});
  std::string path;
  int number = 0;
  if (what == "wait") number = int(a.integer_or("MAX (frames)", {1, kFramesRange.hi}, 1000000));
  if (what == "save") path = a.word_or("PATH", "");
  int64_t step = 0;
  if (what == "until") step = a.integer("STEP", {1, 10000000});
  if (what == "checkpoint") number = int(a.integer("I (a kept checkpoint, oldest 0; -1: the newest)", {-1, 15}));
  a.end();
  return [what, path, number, step](Script& sc) {
    if (what == "wait") return wait_train(sc, number);
    if (what == "until") return train_until(sc, step);
    if (what == "print") return print_train(sc);
    train_act(sc, Action::train(what, path, number), "train " + what);
  };
}

}  // namespace diffscope::shell::script
