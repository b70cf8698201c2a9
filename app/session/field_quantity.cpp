// field_quantity.cpp — the field view's quantity names (see field_quantity.h).
#include "session/field_quantity.h"

#include <utility>

#include "base/errors.h"

namespace diffscope {
namespace {

const std::pair<FieldQuantity, const char*> kQuantities[] = {
    {FieldQuantity::Eps, "eps"}, {FieldQuantity::X0, "x0"}, {FieldQuantity::Output, "output"},
    {FieldQuantity::Score, "score"}};

}  // namespace

const char* field_quantity_name(FieldQuantity q) {
  for (const auto& [v, name] : kQuantities)
    if (v == q) return name;
  return "?";
}

FieldQuantity parse_field_quantity(const std::string& v) {
  for (const auto& [q, name] : kQuantities)
    if (v == name) return q;
  throw InvalidInput("field_quantity = '" + v + "' is not valid; valid: eps, x0, output, score");
}

std::vector<std::string> field_quantity_names() {
  std::vector<std::string> names;
  for (const auto& [q, name] : kQuantities) names.push_back(name);
  return names;
}

}  // namespace diffscope
