// png_text.h — reading a PNG's text chunks (tEXt, zTXt, iTXt; PNG 1.2 spec §4.2.3) with libpng, e.g. the
// sidecar JSON that every exported PNG carries under the keyword `diffscope` (SEMANTICS §6).
#pragma once
#include <optional>
#include <string>

namespace diffscope {

// The text of the first chunk named `keyword`, or nullopt when the PNG has none. Throws InvalidInput naming
// `arg` and the path for a file that cannot be read or is not a PNG.
std::optional<std::string> read_png_text(const std::string& path, const std::string& keyword, const std::string& arg);

}  // namespace diffscope
