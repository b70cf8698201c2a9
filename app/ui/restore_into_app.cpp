// restore_into_app.cpp — a sidecar's restore plan applied to the running app: settings, model, shown frame, camera.
#include "ui/restore_into_app.h"

#include <exception>

#include "picture/exporter.h"
#include "picture/restore.h"
#include "session/settings_keys.h"
#include "ui/app.h"

namespace diffscope::ui {

bool restore_into_app(App& app, const std::string& file) {
  try {
    std::string note;
    const RestorePlan plan = plan_restore(read_sidecar(file, &note));
    AppSettings next = app.settings;
    for (const auto& [k, v] : plan.sets) apply_setting(next, k, v);  // all or nothing
    app.settings = next;
    app.load_model(plan.model.empty() ? app.session->model().path : plan.model, false);  // the sidecar's t_start
    app.show_frame_when_computed(plan.frame);
    app.keep_camera_aspect(plan.camera_aspect);
    note += plan.note;
    app.exporter->messages.push_back("restored " + file + (note.empty() ? "" : ": " + note));
    return true;
  } catch (const std::exception& e) {
    app.exporter->messages.push_back(std::string("error: ") + e.what());
    return false;
  }
}

}  // namespace diffscope::ui
