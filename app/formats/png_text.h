// png_text.h — reading a PNG's text chunks (tEXt, zTXt, iTXt; PNG 1.2 spec §4.2.3) with libpng, e.g. the
// sidecar JSON that every exported PNG carries under the keyword `diffscope` (SEMANTICS §6).
#pragma once
#include <optional>
#include <string>

namespace diffscope {

// The text of the first chunk named `keyword` as UTF-8, or nullopt when the PNG has none. Throws InvalidInput naming
// `arg` and the path for a file that cannot be read or is not a PNG.
// The text of tEXt and zTXt chunks is ISO 8859-1 (PNG spec §11.3.4.3; what Pillow's add_text writes) and is
// converted to UTF-8; iTXt text is UTF-8 and is returned as stored (it may be ill-formed: callers that print it
// escape it, formats/json_path.h escape_invalid_utf8).
std::optional<std::string> read_png_text(const std::string& path, const std::string& keyword, const std::string& arg);

// ISO 8859-1 bytes as UTF-8 (each byte is the code point of the same value).
std::string latin1_to_utf8(const std::string& latin1);

}  // namespace diffscope
