// train_binding.h — diffscope.train: the CPU trainer (app/train/, SEMANTICS §11) from Python.
#pragma once
#include <pybind11/pybind11.h>

#include <functional>
#include <string>

namespace diffscope::python {

// Adds diffscope.train to `m`; `load` turns the written model file's path into the Model returned.
void register_train(pybind11::module_& m, const std::function<pybind11::object(const std::string&)>& load);

}  // namespace diffscope::python
