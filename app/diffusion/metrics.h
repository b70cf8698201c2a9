// metrics.h — sample-quality metrics: the energy distance between two point sets and the mean distance to the
// nearest data point (the model card's measure, tools/quality_measure.py, and the model-quality CI test).
// No CUDA, no GL.
#pragma once

namespace diffscope {

// Mean Euclidean distance over all n*m pairs (X_i, Y_j), accumulated in double.
// X: (n, dim), Y: (m, dim), row-major float32. Throws InvalidInput if n, m or dim < 1 or a pointer is null.
double mean_pairwise_distance(const float* X, int n, const float* Y, int m, int dim);

// Energy distance, V-statistic (Szekely & Rizzo 2013, "Energy statistics", eq. 4 with plain means):
//   2 E|X-Y| - E|X-X'| - E|Y-Y'|,
// every mean over all pairs, the zero diagonal of the X-X' and Y-Y' terms included (so it is >= 0 and
// biased upward by about E|X-X'|/n + E|Y-Y'|/m: compare figures only at the same n and m).
// Same as tools/quality_measure.py's energy distance. Throws InvalidInput as mean_pairwise_distance.
double energy_distance(const float* X, int n, const float* Y, int m, int dim);

// Mean over the rows of X of the Euclidean distance to the nearest row of A: how far samples sit off the data
// (a precision-like check the energy distance lacks: samples filling the gaps between thin rings raise it).
// (tools/quality_measure.py no longer reports it; the CI test's shape checks took its place.) Throws InvalidInput as mean_pairwise_distance.
double mean_nearest_distance(const float* X, int n, const float* A, int m, int dim);

}  // namespace diffscope
