// device_step_table.cpp — DeviceStepTable / DeviceSolverTable uploads.
#include "gpu/device_step_table.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "gpu/cuda_check.h"

namespace diffscope::gpu {

namespace {
// 1 - v in double, then float (the mixture kernel's noise variance near abar = 1).
std::vector<float> one_minus(const std::vector<double>& v) {
  std::vector<float> o(v.size());
  for (size_t i = 0; i < v.size(); ++i) o[i] = static_cast<float>(1.0 - v[i]);
  return o;
}
std::vector<float> as_float(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }

// Whether every value of v is `value` (an empty v too): a family array that changes nothing.
bool all_equal(const std::vector<float>& v, float value) {
  for (float f : v)
    if (f != value) return false;
  return true;
}

// A family table's arrays (StepTable::c_in32 ... Go2_32) on the device. An input scale of exactly 1 and a heun map
// of exactly g = o (Gx 0, Go 1) are left null: the kernels then run the epsilon arithmetic, which computes the
// same values (1 x = x, 0 x + 1 o = o). The VP families' and flow's networks read their state (c_in 1), flow-heun's
// map is g = o: most tables of those families run the solver kernels' epsilon instance.
// Throws std::invalid_argument when a family array's float copy does not hold one value per step (or is missing).
void upload_family(const StepTable& tab, FamilyBuffers& b, cudaStream_t s) {
  const std::pair<const std::vector<double>*, const std::vector<float>*> arrays[] = {
      {&tab.time, &tab.time32}, {&tab.time2, &tab.time2_32}, {&tab.c_in, &tab.c_in32}, {&tab.c_in2, &tab.c_in2_32},
      {&tab.Gx, &tab.Gx32},     {&tab.Go, &tab.Go32},         {&tab.Gx2, &tab.Gx2_32}, {&tab.Go2, &tab.Go2_32}};
  for (const auto& [f64, f32] : arrays)
    if (f32->size() != f64->size() || (!f64->empty() && f64->size() != static_cast<size_t>(tab.steps())))
      throw std::invalid_argument("DeviceSolverTable: a family array holds " + std::to_string(f64->size()) +
                                  " values (float copy " + std::to_string(f32->size()) + ") for " +
                                  std::to_string(tab.steps()) + " steps");
  const auto put = [s](GpuBuffer<float>& d, const std::vector<float>& h, bool needed) {
    d.copy_from_host(needed ? h : std::vector<float>{}, s);
    return needed;
  };
  b.c_in = put(b.d_c_in, tab.c_in32, !all_equal(tab.c_in32, 1.f));
  b.c_in2 = put(b.d_c_in2, tab.c_in2_32, !all_equal(tab.c_in2_32, 1.f));
  const bool g1 = !(all_equal(tab.Gx32, 0.f) && all_equal(tab.Go32, 1.f));
  const bool g2 = !(all_equal(tab.Gx2_32, 0.f) && all_equal(tab.Go2_32, 1.f));
  b.G = put(b.d_Gx, tab.Gx32, g1) && put(b.d_Go, tab.Go32, g1);
  b.G2 = put(b.d_Gx2, tab.Gx2_32, g2) && put(b.d_Go2, tab.Go2_32, g2);
}
}  // namespace

bool DeviceStepTable::upload(const StepTable& tab, cudaStream_t s) {
  if (m_n == tab.steps() && m_T == tab.T && m_ht == tab.t && m_hA == tab.A32 && m_hC == tab.C32 && m_hS == tab.S32)
    return false;
  m_ht = tab.t, m_hA = tab.A32, m_hC = tab.C32, m_hS = tab.S32;
  m_n = tab.steps();
  m_T = tab.T;
  m_t.copy_from_host(m_ht, s);
  m_A.copy_from_host(m_hA, s);
  m_C.copy_from_host(m_hC, s);
  m_S.copy_from_host(m_hS, s);
  return true;
}

void DeviceSolverTable::upload(const StepTable& tab, cudaStream_t s) {
  m_host = tab;
  m_n = tab.steps();
  // The network's time input as the CPU computes it: float(t_net) / float(T), or a family table's time values.
  std::vector<float> tt(m_n), tt2(tab.t_net2.size(), 0.f);
  for (int k = 0; k < m_n; ++k) tt[k] = static_cast<float>(tab.t_net[k]) / static_cast<float>(tab.T);
  for (size_t k = 0; k < tab.t_net2.size(); ++k) tt2[k] = static_cast<float>(tab.t_net2[k]) / static_cast<float>(tab.T);
  if (tab.has_family_rows()) tt = tab.time32, tt2 = tab.time2_32;
  upload_family(tab, m_family, s);
  const std::vector<float> P = as_float(tab.P), Dx = as_float(tab.Dx), De = as_float(tab.De), H = as_float(tab.H);
  const std::vector<float> abar = as_float(tab.abar), abar2 = as_float(tab.abar2);  // the analytic model's noise levels
  const std::vector<float> omab = one_minus(tab.abar), omab2 = one_minus(tab.abar2);
  m_abar.copy_from_host(abar, s);
  m_abar2.copy_from_host(abar2, s);
  m_omab.copy_from_host(omab, s);
  m_omab2.copy_from_host(omab2, s);
  m_tt.copy_from_host(tt, s);
  m_tt2.copy_from_host(tt2, s);
  m_A.copy_from_host(m_host.A32, s);
  m_C.copy_from_host(m_host.C32, s);
  m_S.copy_from_host(m_host.S32, s);
  m_P.copy_from_host(P, s);
  m_Dx.copy_from_host(Dx, s);
  m_De.copy_from_host(De, s);
  m_H.copy_from_host(H, s);
  m_key.copy_from_host(m_host.noise_key, s);
  CUDA_CHECK_THROW(cudaStreamSynchronize(s));  // the host vectors die here
}

kernels::SolverSteps DeviceSolverTable::view() const {
  kernels::SolverSteps v;
  v.tt = m_tt.data(), v.A = m_A.data(), v.C = m_C.data(), v.S = m_S.data(), v.key = m_key.data(), v.n = m_n;
  if (m_host.uses_prev()) v.P = m_P.data(), v.Dx = m_Dx.data(), v.De = m_De.data();
  if (m_host.uses_second_eval()) v.H = m_H.data(), v.tt2 = m_tt2.data();
  const FamilyBuffers& f = m_family;
  if (f.c_in) v.c_in = f.d_c_in.data();
  if (f.c_in2) v.c_in2 = f.d_c_in2.data();
  if (f.G) v.Gx = f.d_Gx.data(), v.Go = f.d_Go.data();
  if (f.G2) v.Gx2 = f.d_Gx2.data(), v.Go2 = f.d_Go2.data();
  return v;
}

void DeviceSolverTable::mixture_levels(kernels::MixtureStepArgs& a) const {
  a.abar = m_abar.data();
  a.abar2 = m_abar2.data();
  a.one_minus_abar = m_omab.data();
  a.one_minus_abar2 = m_omab2.data();
}

}  // namespace diffscope::gpu
