// export_dir.h — where exports go when the user has not chosen a folder: the user's pictures folder, as a
// desktop user expects, never the working directory the app happened to start in.
#pragma once
#include <string>

namespace diffscope {

// $XDG_PICTURES_DIR/diffscope; else the XDG_PICTURES_DIR line of $XDG_CONFIG_HOME/user-dirs.dirs (default
// ~/.config/user-dirs.dirs) + /diffscope when that folder exists; else ~/Pictures/diffscope when ~/Pictures
// exists; else ~/diffscope-exports. Without $HOME: "diffscope-exports" (relative). Nothing is created.
std::string default_export_dir();

// The settings' export folder as used: "" or the old relative default "diffscope_exports" (settings saved
// by earlier versions) -> default_export_dir(); anything else as the user typed it.
std::string resolve_export_dir(const std::string& setting);

}  // namespace diffscope
