// ranges.cpp — the range checks (SEMANTICS §3).
#include "base/ranges.h"

#include <cmath>
#include <sstream>

#include "base/errors.h"

namespace diffscope {

void check_range(const std::string& arg, int64_t value, IntRange r) {
  if (!r.contains(value)) throw_out_of_range(arg, std::to_string(value), r);
}

void throw_out_of_range(const std::string& arg, const std::string& value_text, IntRange r) {
  throw InvalidInput(arg + " = " + value_text + " is out of range; valid: [" + std::to_string(r.lo) + ", " +
                     std::to_string(r.hi) + "]");
}

void check_real_range(const std::string& arg, double value, RealRange r) {
  if (!r.contains(value)) {
    std::ostringstream os;
    os << arg << " = " << value << " is out of range; valid: [" << r.lo << ", " << r.hi << "]";
    throw InvalidInput(os.str());
  }
}

}  // namespace diffscope
