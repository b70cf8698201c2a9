// model_family.h — what a model file's __metadata__ says its network predicts and takes as input (SEMANTICS §6
// "Keys that change the maths"): the keys read, the values understood (an eps-predictor fed x and t / T, §2) and
// the values known but not supported. One table (model_family.cpp) holds them all.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace diffscope {

// One __metadata__ key that changes what the network's output or input means.
struct ParameterizationKey {
  const char* key;
  const char* meaning;                     // what the key says, for messages and docs
  std::vector<const char*> understood;     // values that mean SEMANTICS §2's network; empty: no value is understood
  std::vector<const char*> unsupported;    // values known to mean another family (refused, named as such)
};

// Every key checked, in the order they are checked.
const std::vector<ParameterizationKey>& parameterization_keys();

// Throws InvalidInput "LABEL: __metadata__ 'KEY' = 'VALUE' ..." naming the key, the value and the supported
// values for the first key of parameterization_keys() whose value is not understood (a known other family or
// an unknown value alike). Keys that are absent are fine: a file without them is read as §2's eps-network.
void check_parameterization(const std::map<std::string, std::string>& metadata, const std::string& label);

}  // namespace diffscope
