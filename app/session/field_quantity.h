// field_quantity.h — the names of the field view's quantities (the field_quantity setting, SEMANTICS §6 "The field
// view"); what each one is: session/field_view.h.
#pragma once
#include <string>
#include <vector>

#include "session/settings_io.h"

namespace diffscope {

// "eps" | "x0" | "output" | "score" (the field_quantity setting's values).
const char* field_quantity_name(FieldQuantity q);
// Throws InvalidInput "field_quantity = 'V' is not valid; valid: eps, x0, output, score".
FieldQuantity parse_field_quantity(const std::string& v);
std::vector<std::string> field_quantity_names();

}  // namespace diffscope
