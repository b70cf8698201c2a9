// hidden_ui_hint.h — the note shown for a few seconds after H hides the panels: how to get them back.
#pragma once

namespace diffscope::ui {

// A small translucent window at the bottom right of the display: "UI hidden: press H to show it".
void draw_hidden_ui_hint();

}  // namespace diffscope::ui
