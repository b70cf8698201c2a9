// device_step_table.h — step tables (diffusion/step_table.h, SEMANTICS §3) resident on the device: DeviceStepTable
// for the fast kernels (integer t, A, C, S: kernels::DeviceSteps) and DeviceSolverTable for the solver and
// mixture kernels (float network times, the dpmpp/heun coefficients, noise keys, abar: kernels::SolverSteps).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "diffusion/step_table.h"
#include "gpu/gpu_buffer.h"
#include "kernels/kernels.h"
#include "kernels/mixture/mixture_kernels.h"
#include "kernels/solver/solver_kernels.h"

namespace diffscope::gpu {

class DeviceStepTable {
 public:
  // Copies (t, A32, C32, S32) to the device unless it holds this table already; returns whether it copied.
  // Asynchronous on `s`: the caller waits before the host table's storage may change (the copy is kept here).
  bool upload(const StepTable& tab, cudaStream_t s);
  int steps() const { return m_n; }
  kernels::DeviceSteps view() const { return {m_t.data(), m_A.data(), m_C.data(), m_S.data(), m_n, m_T}; }

 private:
  GpuBuffer<int32_t> m_t;
  GpuBuffer<float> m_A, m_C, m_S;
  int m_n = 0, m_T = 0;
  std::vector<int32_t> m_ht;  // the resident table, to skip an upload of the same one
  std::vector<float> m_hA, m_hC, m_hS;
};

// A family table's per-step network input scales and heun map on the device (null where they change nothing).
struct FamilyBuffers {
  GpuBuffer<float> d_c_in, d_c_in2, d_Gx, d_Go, d_Gx2, d_Go2;
  bool c_in = false, c_in2 = false, G = false, G2 = false;  // which arrays the kernels read
};

class DeviceSolverTable {
 public:
  // Uploads every array of `tab` the solver and mixture kernels read (tt = t_net / T as the CPU computes it, or
  // time32 / time2_32 for a table with has_family_rows(); the family arrays c_in32 ... Go2_32 unless they are
  // the identity; 1 - abar in double then float) and waits on `s`. Keeps a copy of `tab` for view().
  void upload(const StepTable& tab, cudaStream_t s);
  int steps() const { return m_n; }
  const StepTable& host() const { return m_host; }
  // The kernels' table: P/Dx/De only when the table uses the previous data prediction, H/tt2 only for a second
  // evaluation, the family arrays only where they change the arithmetic (the kernels test those pointers).
  kernels::SolverSteps view() const;
  // abar, abar2 and their complements for kernels::MixtureStepArgs.
  void mixture_levels(kernels::MixtureStepArgs& a) const;

 private:
  StepTable m_host;
  GpuBuffer<float> m_tt, m_tt2, m_A, m_C, m_S, m_P, m_Dx, m_De, m_H, m_abar, m_abar2, m_omab, m_omab2;
  GpuBuffer<uint32_t> m_key;
  FamilyBuffers m_family;
  int m_n = 0;
};

}  // namespace diffscope::gpu
