// model.cpp — loading the eps-network (+ schedule, metadata, data samples) and the 3-layer MLP from
// .safetensors files, with every shape checked against SEMANTICS §2, §5 (never transposed: (out, in)).
#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <regex>
#include <set>

#include "base/errors.h"
#include "formats/safetensors.h"
#include "model/gaussian_mixture.h"
#include "model/model.h"
#include "model/model_family.h"
#include "model/model_load.h"

namespace diffscope {
namespace {

[[noreturn]] void fail(const std::string& label, const std::string& what) {
  throw InvalidInput(label + ": " + what);
}

// Checks that `name` exists with exactly `expected` shape; `layout` says what the dims mean, e.g. "(hidden, dim+1)".
const TensorInfo& expect_shape(const SafetensorsFile& f, const std::string& name,
                               const std::vector<int64_t>& expected, const std::string& layout) {
  const TensorInfo* t = f.find(name);
  if (!t) fail(f.label(), "missing tensor '" + name + "' (expected shape " + format_shape(expected) + " = " + layout + ")");
  if (t->shape != expected)
    fail(f.label(), "tensor '" + name + "' has shape " + format_shape(t->shape) + ", expected " +
                        format_shape(expected) + " = " + layout);
  return *t;
}

// Reads `name` as float32 and refuses NaN/Inf values (a model with them cannot give finite samples).
std::vector<float> read_finite(const SafetensorsFile& f, const std::string& name) {
  std::vector<float> v = f.read_float(name);
  for (size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]))
      fail(f.label(), "tensor '" + name + "' element " + std::to_string(i) + " is " + std::to_string(v[i]) +
                          " (valid: finite values)");
  return v;
}

// A dimension read off a shape must be a positive int.
int positive_dim(const SafetensorsFile& f, const TensorInfo& t, size_t axis, const std::string& what) {
  const int64_t d = t.shape[axis];
  if (d < 1 || d > INT_MAX)
    fail(f.label(), "tensor '" + t.name + "' has shape " + format_shape(t.shape) + "; " + what + " = " +
                        std::to_string(d) + " (valid: 1 to " + std::to_string(INT_MAX) + ")");
  return static_cast<int>(d);
}

// Strict number parsing of metadata strings: the whole string must be the number.
int parse_meta_int(const std::string& label, const std::string& key, const std::string& v) {
  int out = 0;
  const auto r = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size())
    fail(label, "__metadata__ '" + key + "' = '" + v + "' is not an integer");
  return out;
}
double parse_meta_double(const std::string& label, const std::string& key, const std::string& v) {
  double out = 0;
  const auto r = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size() || !std::isfinite(out))
    fail(label, "__metadata__ '" + key + "' = '" + v + "' is not a finite number");
  return out;
}

std::string fmt(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

const char* const kScheduleBuffers[] = {"alphas", "alphas_cumprod", "sqrt_recip_alphas", "coef_eps"};

// SEMANTICS §1: file betas (F64/F32) take precedence, then __metadata__ T/schedule, then default linear.
Schedule schedule_from(const SafetensorsFile& f, std::vector<std::string>& warnings) {
  const std::string& L = f.label();
  const auto& meta = f.metadata();
  auto mget = [&](const char* k) -> const std::string* {
    auto it = meta.find(k);
    return it == meta.end() ? nullptr : &it->second;
  };
  try {
    if (const TensorInfo* b = f.find("betas")) {
      if (b->shape.size() != 1)
        fail(L, "tensor 'betas' has shape " + format_shape(b->shape) + ", expected (T,)");
      Schedule s = Schedule::from_betas(f.read_double_schedule("betas"), "file betas (" + b->dtype + ")");
      if (const std::string* t = mget("T")) {
        const int mt = parse_meta_int(L, "T", *t);
        if (mt != s.T)
          warnings.push_back("__metadata__ T = " + std::to_string(mt) + " disagrees with betas of length " +
                             std::to_string(s.T) + "; using T = " + std::to_string(s.T));
      }
      return s;
    }
    int T = 1000;
    if (const std::string* t = mget("T")) T = parse_meta_int(L, "T", *t);
    const std::string kind = mget("schedule") ? *mget("schedule") : "linear";
    if (kind == "linear") {
      double b0 = 1e-4, b1 = 0.02;
      if (const std::string* v = mget("beta_start")) b0 = parse_meta_double(L, "beta_start", *v);
      if (const std::string* v = mget("beta_end")) b1 = parse_meta_double(L, "beta_end", *v);
      Schedule s = Schedule::linear(T, b0, b1);
      const bool from_meta = mget("T") || mget("schedule") || mget("beta_start") || mget("beta_end");
      s.source = (from_meta ? "metadata " : "default ") + s.source;
      return s;
    }
    if (kind == "cosine") {
      Schedule s = Schedule::cosine(T);
      s.source = "metadata " + s.source;
      return s;
    }
    fail(L, "__metadata__ 'schedule' = '" + kind + "' (valid: linear, cosine)");
  } catch (const InvalidInput& e) {
    const std::string msg = e.what();
    if (msg.rfind(L + ": ", 0) == 0) throw;
    fail(L, msg);
  }
}

// The file's other schedule buffers are only compared with the recomputation (SEMANTICS §1).
void compare_schedule_buffers(const SafetensorsFile& f, const Schedule& s, std::vector<std::string>& warnings) {
  for (const char* name : kScheduleBuffers) {
    if (!f.find(name)) continue;
    const std::vector<double> v = f.read_double_schedule(name);  // refuses F16/BF16 and non-floats
    const std::vector<double>& ours = name == std::string("alphas")           ? s.alphas
                                      : name == std::string("alphas_cumprod") ? s.alphas_cumprod
                                      : name == std::string("sqrt_recip_alphas") ? s.sqrt_recip_alphas
                                                                                 : s.coef_eps;
    if (v.size() != ours.size()) {
      warnings.push_back(std::string("schedule tensor '") + name + "' has " + std::to_string(v.size()) +
                         " values but T = " + std::to_string(s.T) + "; ignored (recomputed from " + s.source + ")");
      continue;
    }
    double worst = 0.0;
    size_t worst_t = 0;
    for (size_t t = 0; t < v.size(); ++t) {
      const double rel = std::abs(v[t] - ours[t]) / std::max(std::abs(ours[t]), 1e-300);
      if (!(rel <= worst)) {  // also catches NaN in the file
        worst = std::isnan(rel) ? INFINITY : rel;
        worst_t = t;
      }
    }
    if (worst > kScheduleWarnRelDiff)
      warnings.push_back(std::string("schedule tensor '") + name + "' differs from the float64 recomputation by " +
                         fmt(worst) + " relative at t = " + std::to_string(worst_t) + " (file " + fmt(v[worst_t]) +
                         ", recomputed " + fmt(ours[worst_t]) + "); the recomputed values are used");
  }
}

}  // namespace

void EpsNet::validate() const {
  if (dim < 1 || hidden < 1)
    throw InvalidInput("eps-network: dim = " + std::to_string(dim) + ", hidden = " + std::to_string(hidden) +
                       " (valid: each >= 1)");
  const size_t d = static_cast<size_t>(dim), h = static_cast<size_t>(hidden);
  auto check = [](const char* name, size_t got, size_t want, const char* layout) {
    if (got != want)
      throw InvalidInput(std::string("eps-network: ") + name + " has " + std::to_string(got) + " values, expected " +
                         std::to_string(want) + " = " + layout);
  };
  check("W1", W1.size(), h * (d + 1), "hidden*(dim+1)");
  check("b1", b1.size(), h, "hidden");
  check("W2", W2.size(), h * h, "hidden*hidden");
  check("b2", b2.size(), h, "hidden");
  check("W3", W3.size(), d * h, "dim*hidden");
  check("b3", b3.size(), d, "dim");
  if (classes < 0) throw InvalidInput("eps-network: classes = " + std::to_string(classes) + " (valid: >= 0)");
  check("class_emb", class_emb.size(), classes > 0 ? (static_cast<size_t>(classes) + 1) * h : 0,
        "(classes+1)*hidden");
}

void read_eps_net(const SafetensorsFile& f, EpsNet& n);

namespace {

// Builds the model; with `problems`, every refusal that still leaves something to show (a parameterization the
// product does not run, a missing or misshapen tensor, a bad schedule) is recorded there, without the file's
// label, and the build goes on with what it can read; without, the first one throws.
DiffusionModel build_diffusion_model(const SafetensorsFile& f, std::vector<std::string>* problems) {
  const std::string& L = f.label();
  auto attempt = [&](auto&& part) {
    if (!problems) return part(), true;
    try {
      part();
      return true;
    } catch (const InvalidInput& e) {
      const std::string msg = e.what();
      problems->push_back(msg.rfind(L + ": ", 0) == 0 ? msg.substr(L.size() + 2) : msg);
      return false;
    }
  };
  DiffusionModel m;
  m.path = L;
  m.metadata = f.metadata();
  attempt([&] { check_parameterization(m.metadata, L); });  // SEMANTICS §6: keys that change the maths
  attempt([&] {  // SEMANTICS §2 "How a file says it"; T is the schedule's (checked with it below)
    std::map<std::string, std::string> keys = m.metadata;
    keys.erase("T");
    m.family = family_from_metadata(keys, L);
    m.family_in_file = m.metadata.count("prediction_type") > 0;
  });

  std::set<std::string> used = {"betas", "data_samples"};
  const auto kind = m.metadata.find("kind");
  if (kind != m.metadata.end() && kind->second == kGaussianMixtureKind) {
    // SEMANTICS §6: an analytic model; no network, net.dim is the data dimension and net.hidden is 0.
    attempt([&] {
      m.mixture = read_gaussian_mixture(f);
      m.net.dim = m.mixture->dim;
    });
    used.insert({"means", "stds", "weights", "classes"});
  } else {
    attempt([&] { read_eps_net(f, m.net); });
    used.insert({"eps_net.0.weight", "eps_net.0.bias", "eps_net.2.weight", "eps_net.2.bias", "eps_net.4.weight",
                 "eps_net.4.bias", "class_emb.weight"});
  }
  const int64_t d = m.net.dim;
  if (attempt([&] { m.schedule = schedule_from(f, m.warnings); }))
    attempt([&] { compare_schedule_buffers(f, m.schedule, m.warnings); });
  m.family.T = m.schedule.T;
  m.schedule_in_file = f.find("betas") || m.metadata.count("T") || m.metadata.count("schedule") ||
                       m.metadata.count("beta_start") || m.metadata.count("beta_end");

  if (const TensorInfo* ds = f.find("data_samples"); ds && d > 0) {
    attempt([&] {
      if (ds->shape.size() != 2 || ds->shape[1] != d || ds->shape[0] > INT_MAX)
        fail(L, "tensor 'data_samples' has shape " + format_shape(ds->shape) + ", expected (N, " + std::to_string(d) +
                    ") = (N, dim)");
      m.data_samples = read_finite(f, "data_samples");
      m.n_data = static_cast<int>(ds->shape[0]);
    });
  }

  used.insert(std::begin(kScheduleBuffers), std::end(kScheduleBuffers));
  for (const TensorInfo& t : f.tensors())
    if (!used.count(t.name)) m.ignored_tensors.push_back(t.name);
  return m;
}

}  // namespace

DiffusionModel diffusion_model_from(const SafetensorsFile& f) { return build_diffusion_model(f, nullptr); }

DiffusionModel inspect_diffusion_model(const SafetensorsFile& f, std::vector<std::string>& problems) {
  return build_diffusion_model(f, &problems);
}

// The eps-network tensors eps_net.{0,2,4}.{weight,bias} (SEMANTICS §2), shapes checked.
void read_eps_net(const SafetensorsFile& f, EpsNet& n) {
  const std::string& L = f.label();
  const TensorInfo* w1 = f.find("eps_net.0.weight");
  if (!w1) fail(L, "missing tensor 'eps_net.0.weight' (expected shape (hidden, dim+1))");
  if (w1->shape.size() != 2 || w1->shape[1] < 2)
    fail(L, "tensor 'eps_net.0.weight' has shape " + format_shape(w1->shape) +
                ", expected (hidden, dim+1) with dim >= 1");
  n.hidden = positive_dim(f, *w1, 0, "hidden");
  n.dim = positive_dim(f, *w1, 1, "dim+1") - 1;
  const int64_t h = n.hidden, d = n.dim;
  expect_shape(f, "eps_net.0.bias", {h}, "(hidden,)");
  expect_shape(f, "eps_net.2.weight", {h, h}, "(hidden, hidden)");
  expect_shape(f, "eps_net.2.bias", {h}, "(hidden,)");
  expect_shape(f, "eps_net.4.weight", {d, h}, "(dim, hidden)");
  expect_shape(f, "eps_net.4.bias", {d}, "(dim,)");
  n.W1 = read_finite(f, "eps_net.0.weight");
  n.b1 = read_finite(f, "eps_net.0.bias");
  n.W2 = read_finite(f, "eps_net.2.weight");
  n.b2 = read_finite(f, "eps_net.2.bias");
  n.W3 = read_finite(f, "eps_net.4.weight");
  n.b3 = read_finite(f, "eps_net.4.bias");
  if (const TensorInfo* e = f.find("class_emb.weight")) {  // SEMANTICS §2: a class-conditional network
    if (e->shape.size() != 2 || e->shape[0] < 2 || e->shape[0] > INT_MAX || e->shape[1] != h)
      fail(L, "tensor 'class_emb.weight' has shape " + format_shape(e->shape) + ", expected (C + 1, " +
                  std::to_string(h) + ") = (classes + 1 with the null class last, hidden), C >= 1");
    n.classes = static_cast<int>(e->shape[0]) - 1;
    n.class_emb = read_finite(f, "class_emb.weight");
  }
  n.validate();
}

DiffusionModel load_diffusion_model(const std::string& path) {
  return diffusion_model_from(SafetensorsFile::open(path));
}

Mlp3Weights mlp3_from(const SafetensorsFile& f) {
  const std::string& L = f.label();
  static const std::regex bias_re("fc[0-9]+\\.bias");
  for (const TensorInfo& t : f.tensors())
    if (std::regex_match(t.name, bias_re))
      fail(L, "tensor '" + t.name + "' found, but the 3-layer MLP has no bias (SEMANTICS §5: y = "
                  "relu(relu(x W1) W2) W3)");
  Mlp3Weights w;
  const TensorInfo* f1 = f.find("fc1.weight");
  if (!f1) {
    const bool diffusion = f.find("eps_net.0.weight") != nullptr;
    fail(L, "missing tensor 'fc1.weight' (expected shape (d1, d0))" +
                std::string(diffusion ? "; this is a diffusion model: the 3-layer MLP workload (SEMANTICS §5) needs "
                                        "fc1/fc2/fc3.weight, e.g. tests/data/golden/mlp3_b16_48_64_40_24_weights.safetensors"
                                      : ""));
  }
  if (f1->shape.size() != 2) fail(L, "tensor 'fc1.weight' has shape " + format_shape(f1->shape) + ", expected (d1, d0)");
  w.d1 = positive_dim(f, *f1, 0, "d1");
  w.d0 = positive_dim(f, *f1, 1, "d0");
  const TensorInfo* f2 = f.find("fc2.weight");
  if (!f2) fail(L, "missing tensor 'fc2.weight' (expected shape (d2, " + std::to_string(w.d1) + "))");
  if (f2->shape.size() != 2 || f2->shape[1] != w.d1)
    fail(L, "tensor 'fc2.weight' has shape " + format_shape(f2->shape) + ", expected (d2, " + std::to_string(w.d1) +
                ") = (d2, d1) to follow fc1.weight " + format_shape(f1->shape));
  w.d2 = positive_dim(f, *f2, 0, "d2");
  const TensorInfo* f3 = f.find("fc3.weight");
  if (!f3) fail(L, "missing tensor 'fc3.weight' (expected shape (d3, " + std::to_string(w.d2) + "))");
  if (f3->shape.size() != 2 || f3->shape[1] != w.d2)
    fail(L, "tensor 'fc3.weight' has shape " + format_shape(f3->shape) + ", expected (d3, " + std::to_string(w.d2) +
                ") = (d3, d2) to follow fc2.weight " + format_shape(f2->shape));
  w.d3 = positive_dim(f, *f3, 0, "d3");
  w.W1 = read_finite(f, "fc1.weight");
  w.W2 = read_finite(f, "fc2.weight");
  w.W3 = read_finite(f, "fc3.weight");
  return w;
}

Mlp3Weights load_mlp3(const std::string& path) { return mlp3_from(SafetensorsFile::open(path)); }

}  // namespace diffscope
