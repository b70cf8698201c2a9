// errors.h — the error types every layer throws; the CLI maps them to exit codes (SEMANTICS §9).
#pragma once
#include <stdexcept>
#include <string>

namespace diffscope {

// Bad user input: a flag, a value out of range, a malformed or unreadable file, an unwritable path.
// The message names the argument, the value and the valid range. CLI exit code 2.
struct InvalidInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A resource the user asked for is unavailable: no CUDA device, out of memory. CLI exit code 3.
struct ResourceUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace diffscope
