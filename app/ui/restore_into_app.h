// restore_into_app.h — a sidecar (picture/restore.h) applied to the running app.
#pragma once
#include <string>

namespace diffscope::ui {

class App;
// A file dropped on the window (or the script's `restore FILE`): applies the plan to the running app — its
// settings, then the model (re-opened, so the run restarts and an automatic camera is fitted again). The note
// or the error goes to the Export section's messages. Returns false (and changes nothing) on an error.
bool restore_into_app(App& app, const std::string& file);

}  // namespace diffscope::ui
