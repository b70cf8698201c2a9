// json_bounded.cpp — see json_bounded.h.
#include "formats/json_bounded.h"

#include <stdexcept>

namespace diffscope {

nlohmann::json parse_json_bounded(const std::string& text, int max_depth) {
  const nlohmann::json::parser_callback_t guard = [max_depth](int depth, nlohmann::json::parse_event_t event,
                                                              nlohmann::json&) {
    if ((event == nlohmann::json::parse_event_t::object_start || event == nlohmann::json::parse_event_t::array_start) &&
        depth >= max_depth)
      throw std::runtime_error("nested deeper than " + std::to_string(max_depth) + " levels");
    return true;
  };
  return nlohmann::json::parse(text, guard);
}

}  // namespace diffscope
