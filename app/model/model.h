// model.h — the eps-network and 3-layer-MLP weights in PyTorch layout, and loading them from .safetensors
// (SEMANTICS §2, §5, §6).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <optional>

#include "model/family.h"
#include "model/gaussian_mixture.h"
#include "model/schedule.h"

namespace diffscope {

// The reference eps-network (SEMANTICS §2). Matrices are row-major (out, in) as nn.Linear stores them:
//   W1: (hidden, dim+1)  b1: (hidden)   W2: (hidden, hidden)  b2: (hidden)   W3: (dim, hidden)  b3: (dim)
// Input row u = [x_0 .. x_{dim-1}, t/T]. A class-conditional network (classes = C >= 1) adds row c of
// class_emb ((C + 1, hidden), row C the null class) to the first layer's pre-activation (SEMANTICS §2).
struct EpsNet {
  int dim = 0;
  int hidden = 0;
  std::vector<float> W1, b1, W2, b2, W3, b3;
  int classes = 0;               // C; 0: no class input
  std::vector<float> class_emb;  // (C + 1, hidden), empty when classes == 0
  // Throws InvalidInput if any vector's size disagrees with dim/hidden/classes.
  void validate() const;
};

// A diffusion model as loaded from a .safetensors file.
struct DiffusionModel {
  std::string path;                              // file it came from ("" if built in memory)
  EpsNet net;
  Schedule schedule;
  bool schedule_in_file = false;                 // a betas tensor or schedule metadata (else the default linear)
  std::map<std::string, std::string> metadata;   // __metadata__ strings
  int n_data = 0;                                // rows of data_samples (0 if absent)
  std::vector<float> data_samples;               // (n_data, dim) held-out data points
  std::vector<std::string> ignored_tensors;      // tensors present but not used
  std::vector<std::string> warnings;             // e.g. schedule buffers disagreeing with recomputation
  // An analytic model (metadata kind gaussian_mixture, SEMANTICS §6) instead of a network: then net holds
  // only dim (hidden = 0, no weights) and eps is the mixture's exact eps.
  std::optional<GaussianMixture> mixture;
  // What the network's output and time input mean (SEMANTICS §2 "Model families"): family_from_metadata of the
  // file's __metadata__; family_in_file is false when the file names no prediction_type (a front end's
  // prediction_type override then applies, with a note).
  FamilyParams family;
  bool family_in_file = false;
  // The classes C of a class-conditional network (class_emb.weight) or a mixture with classes (SEMANTICS §2, §6);
  // 0: none.
  int classes() const { return mixture ? mixture->n_classes : net.classes; }
};

// Loads and validates a model file (SEMANTICS §6, §1). Throws InvalidInput with a message naming the file,
// the tensor and the numbers for every malformed case.
DiffusionModel load_diffusion_model(const std::string& path);

// The bias-free 3-layer MLP (SEMANTICS §5): y = relu(relu(x W1^T) W2^T) W3^T with W stored (out, in):
//   W1: (d1, d0)  W2: (d2, d1)  W3: (d3, d2), row-major.
struct Mlp3Weights {
  int d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  std::vector<float> W1, W2, W3;
};

// Loads fc1.weight, fc2.weight, fc3.weight; refuses fcN.bias and inconsistent shapes (InvalidInput).
Mlp3Weights load_mlp3(const std::string& path);

}  // namespace diffscope
