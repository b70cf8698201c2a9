// fault_injection.cpp — $DIFFSCOPE_FAULT, parsed once.
#include "platform/fault_injection.h"

#include <cstdlib>
#include <sstream>
#include <string>
#include <unordered_set>

namespace diffscope {

bool fault_injected(const std::string& name) {
  static const std::unordered_set<std::string> faults = [] {
    std::unordered_set<std::string> set;
    const char* env = std::getenv("DIFFSCOPE_FAULT");
    std::istringstream in(env ? env : "");
    for (std::string item; std::getline(in, item, ',');)
      if (!item.empty()) set.insert(item);
    return set;
  }();
  return faults.count(name) > 0;
}

}  // namespace diffscope
