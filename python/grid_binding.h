// grid_binding.h — diffscope.grid (the comparison grid, SEMANTICS §10) on the Python module.
#pragma once
#include <pybind11/pybind11.h>

namespace diffscope::python {

// Adds diffscope.grid(spec, model, ...) to `m`.
void register_grid(pybind11::module_& m);

}  // namespace diffscope::python
