// persisted_ranges.cpp — the settings file's ranges, one per numeric row of the settings schema.
#include "session/persisted_ranges.h"

#include <deque>

#include "session/settings_schema.h"

namespace diffscope {

const std::vector<PersistedRange>& persisted_ranges() {
  // Bounds: each numeric row of the settings schema (session/settings_schema.h) carries its own; the seed takes
  // every uint64.
  static const std::vector<PersistedRange> table = [] {
    std::vector<PersistedRange> t;
    static std::deque<std::string> names;  // keeps the "section.key" texts alive (a deque never moves them)
    for (const SettingField& f : setting_fields()) {
      const bool seed = f.key == std::string("seed");
      if (!f.persisted || (!(f.lo < f.hi) && !seed)) continue;
      names.push_back(std::string(section_name(f.section)) + "." + f.key);
      t.push_back({names.back().c_str(), seed ? 0.0 : f.lo, seed ? 18446744073709551615.0 : f.hi});
    }
    return t;
  }();
  return table;
}

const PersistedRange* find_persisted_range(const std::string& name) {
  for (const PersistedRange& r : persisted_ranges())
    if (name == r.name) return &r;
  return nullptr;
}

}  // namespace diffscope
