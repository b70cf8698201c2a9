// ideal_denoiser.h — the exact denoiser of an empirical distribution (the training set itself) and its
// deterministic samples (SEMANTICS §11 "The training panel": shown beside the model's for a small data set).
//
// For data rows d_i (i < m) and a state x = alpha x0 + sigma eps with x0 uniform over the rows and eps ~ N(0, I),
// E[x0 | x] = sum_i w_i d_i with w = softmax_i(-|x - alpha d_i|^2 / (2 sigma^2)) — a closed form; the minimiser
// of the training loss over all functions, so a network that reaches it reproduces training rows (memorises).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace diffscope {

// Most rows the app runs the ideal denoiser on (its cost is rows x samples x steps).
constexpr int64_t kIdealMaxRows = 2000;

// E[x0 | x] for the n rows of x (n, dim), float64, into x0 (n, dim). sigma > 0; data (m, dim) row-major, m >= 1.
void ideal_denoiser(const std::vector<float>& data, int dim, const std::vector<double>& x, double alpha,
                    double sigma, std::vector<double>& x0);

// Deterministic (DDIM, eta 0) samples from noise z (n, dim) over the levels (alpha_k, sigma_k), k = 0 .. K-1, from
// the noisiest: x = z, then at each level eps = (x - alpha x0) / sigma with x0 = ideal_denoiser(x) and
// x <- alpha' x0 + sigma' eps with the next level's (the last: x <- x0). Flow's levels are (1 - s, s).
std::vector<float> ideal_samples(const std::vector<float>& data, int dim, const std::vector<float>& z,
                                 const std::vector<std::pair<double, double>>& levels);

}  // namespace diffscope
