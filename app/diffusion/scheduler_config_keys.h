// scheduler_config_keys.h — the checked reads of one scheduler_config.json key that the readers of
// scheduler_config.cpp (VP classes) and scheduler_config_family.cpp (FlowMatch*, EDM*, use_flow_sigmas) share.
// Each throws InvalidInput "LABEL: 'KEY' = VALUE (valid: RANGE)"; a missing key and null give the default.
#pragma once
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diffusion/scheduler_config.h"

namespace diffscope::config_keys {

using nlohmann::json;

constexpr int kMaxTrainTimesteps = 1'000'000;

[[noreturn]] void bad(const std::string& label, const std::string& key, const json& v, const std::string& valid);
// The value under `key`, or nullptr when it is missing or null (diffusers writes null for unset options).
const json* find(const json& j, const char* key);
int get_int(const json& j, const std::string& label, const char* key, int def, int lo, int hi);
bool get_bool(const json& j, const std::string& label, const char* key, bool def);
std::string get_choice(const json& j, const std::string& label, const char* key, const std::string& def,
                       const std::vector<std::string>& choices, const std::string& hint = "");
// A finite number; above `lo` (exclusive) when lo_open, else at least `lo`; below `hi` (exclusive). `valid`
// says the range in the message.
double get_number(const json& j, const std::string& label, const char* key, double def, double lo, bool lo_open,
                  double hi, const std::string& valid);
// A finite number > 0.
double get_positive(const json& j, const std::string& label, const char* key, double def);
// A boolean key that must be false (or missing / null): `what` says what true does in diffusers.
void require_false(const json& j, const std::string& label, const char* key, const std::string& what);
// Refuses the first key of `j` outside `known`: a key this reader does not know (or that the class does not
// have) may change the maths. `whose`: "" or " of CLASS" for the message.
void refuse_unknown_keys(const json& j, const std::string& label, const std::set<std::string>& known,
                         const std::string& whose);

// The family classes (scheduler_config_family.cpp): FlowMatchEulerDiscreteScheduler,
// FlowMatchHeunDiscreteScheduler, EDMEulerScheduler, EDMDPMSolverMultistepScheduler.
bool is_family_class(const std::string& class_name);
// Those whose names start with `prefix` ("FlowMatch", "EDM"), comma-separated, for messages.
std::string family_classes(const std::string& prefix);
// Reads the config of a family class into c (class_name set): its list, its prediction_type, the inert keys;
// every other key refused.
void parse_family_class(const json& j, const std::string& label, SchedulerConfig& c);

}  // namespace diffscope::config_keys
