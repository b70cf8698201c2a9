// random_weights.h — seeded random networks and the relative error measure shared by the benchmarks
// (CLI bench, GPU bench, kernel panel), so every figure is computed on the same kind of workload.
#pragma once
#include <cstdint>
#include <vector>

#include "model/model.h"

namespace diffscope {

// An eps-network (dim, hidden) with nn.Linear-like init: every weight and bias uniform in
// [-1/sqrt(fan_in), 1/sqrt(fan_in)] (std::mt19937 seeded with `seed`), on the default linear schedule (T = 1000).
DiffusionModel make_random_model(int dim, int hidden, uint32_t seed);

// A bias-free 3-layer MLP d0 -> d1 -> d2 -> d3 with the same init (SEMANTICS §5 layout, (out, in)).
Mlp3Weights make_random_mlp3(int d0, int d1, int d2, int d3, uint32_t seed);

// Relative Frobenius error ||a - b|| / ||b|| of a float result against its float64 reference (same size);
// +infinity if `a` holds a non-finite value.
double relative_frobenius_error(const std::vector<float>& a, const std::vector<double>& b);

}  // namespace diffscope
