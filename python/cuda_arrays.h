// cuda_arrays.h — CUDA arrays in and out of the Python module without a copy (README "Python", CUDA).
// In: any object with __dlpack__ / __dlpack_device__ (DLPack, kDLCUDA; torch, CuPy, JAX) or with
// __cuda_array_interface__ version 3 (Numba, CuPy), float32, C-contiguous (B, dim), on the backend's device.
// Out: diffscope.CudaArray, which exposes both protocols and .numpy() (a host copy).
// Streams: `stream` None computes on the backend's stream and synchronises before returning; an int
// (a cudaStream_t; 0 = the legacy default stream) enqueues the work there and returns at once. Producers
// are ordered before it: DLPack through __dlpack__(stream=...), the interface's "stream" entry through an
// event. In a build without CUDA these throw ResourceUnavailable.
#pragma once
#include <pybind11/pybind11.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "diffusion/step_table.h"
#include "model/model.h"
#include "python/module_util.h"
#include "run/backend.h"

namespace diffscope::python {

// True when x offers __cuda_array_interface__, or __dlpack_device__ says kDLCUDA.
bool is_cuda_array(const pybind11::handle& x);

// Model.sample(out='cuda'): CudaArray x (n, dim), or (x, trajectory) when `frames` (kept frame indices) is
// not empty.
pybind11::object sample_cuda(Backends& backends, std::mutex& mutex, const DiffusionModel& model,
                             const StepTable& table, int n, uint64_t seed, bool from_data, int t_start,
                             Precision precision, const std::vector<int>& frames, int64_t stream);
// Model.denoise on a CUDA array x (B, dim): in place; returns x.
pybind11::object denoise_cuda(Backends& backends, std::mutex& mutex, const DiffusionModel& model,
                              const pybind11::object& x, const pybind11::object& t_start, int64_t steps,
                              const std::string& backend, Precision precision, int64_t stream);
// mlp3 on a CUDA array x (B, d0): a new CudaArray (B, d3).
pybind11::object mlp3_cuda(Backends& backends, std::mutex& mutex, const Mlp3Weights& w, const std::string& weights,
                           const pybind11::object& x, const std::string& backend, Precision precision,
                           int64_t stream);

// Adds diffscope.CudaArray (CUDA builds only).
void register_cuda_array(pybind11::module_& m);

}  // namespace diffscope::python
