// train_file.cpp — the model file and the checkpoint of a training run.
#include "train/train_file.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "base/errors.h"
#include "formats/safetensors.h"
#include "formats/safetensors_write.h"
#include "formats/sha256.h"
#include "train/objective.h"

namespace diffscope::train {
namespace {

constexpr const char* kCheckpointKind = "diffscope_train_checkpoint";
const char* const kStateTensors[] = {"train.params", "train.adam_m", "train.adam_v", "train.ema"};

std::string num(double v, const char* fmt = "%.9g") {
  char buf[40];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::map<std::string, std::string> data_metadata(const TrainData& d) {
  std::string offset;
  for (double o : d.offset) offset += (offset.empty() ? "" : ",") + num(o);
  return {{"dim", std::to_string(d.dim)}, {"data_offset", offset}, {"data_scale", num(d.scale)},
          {"data_transform", "x = (raw - data_offset) * data_scale"}, {"normalization", d.normalization},
          {"data_source", d.source}, {"data_train_rows", std::to_string(d.n_train)},
          {"data_samples", std::to_string(d.n_held) + " held-out rows of the data, never trained on"}};
}

TensorOut tensor(std::string name, std::vector<int64_t> shape, const float* p, size_t n) {
  return TensorOut{std::move(name), std::move(shape), std::vector<float>(p, p + n), {}};
}

}  // namespace

std::string model_file_bytes(const TrainConfig& c, const TrainData& d, const TrainState& s,
                             const std::map<std::string, std::string>& extra) {
  const MlpLayout L(d.dim, c.hidden);
  const float* w = s.ema.data();
  const int64_t H = c.hidden, D = d.dim;
  std::vector<TensorOut> t = {tensor("eps_net.0.weight", {H, D + 1}, w + L.W1, L.b1 - L.W1),
                              tensor("eps_net.0.bias", {H}, w + L.b1, size_t(H)),
                              tensor("eps_net.2.weight", {H, H}, w + L.W2, L.b2 - L.W2),
                              tensor("eps_net.2.bias", {H}, w + L.b2, size_t(H)),
                              tensor("eps_net.4.weight", {D, H}, w + L.W3, L.b3 - L.W3),
                              tensor("eps_net.4.bias", {D}, w + L.b3, size_t(D))};
  if (d.n_held > 0) t.push_back(tensor("data_samples", {d.n_held, D}, d.held.data(), d.held.size()));
  std::map<std::string, std::string> meta = config_metadata(c);
  for (const auto& [k, v] : data_metadata(d)) meta[k] = v;
  meta["prediction_type"] = objective_name(c.objective);
  meta["training_steps"] = std::to_string(s.step);
  meta["optimizer"] = "Adam, " + std::to_string(c.warmup_steps()) + " warm-up steps, cosine decay to " +
                      num(c.final_lr_frac, "%g") + " x lr; EMA weights saved";
  if (c.objective == Objective::Flow) {
    meta["time_input"] = "s";
  } else {
    meta["time_input"] = "t/T";
    meta["schedule"] = c.schedule;
    if (c.schedule == "linear") {
      meta["beta_start"] = num(c.beta_start, "%.17g");
      meta["beta_end"] = num(c.beta_end, "%.17g");
    }
    const Schedule sc = train_schedule(c);
    const std::pair<const char*, const std::vector<double>*> buffers[] = {
        {"betas", &sc.betas}, {"alphas", &sc.alphas}, {"alphas_cumprod", &sc.alphas_cumprod},
        {"sqrt_recip_alphas", &sc.sqrt_recip_alphas}, {"coef_eps", &sc.coef_eps}};
    for (const auto& [name, v] : buffers)
      t.push_back(TensorOut{name, {int64_t(v->size())}, std::vector<float>(v->begin(), v->end()), {}});
  }
  for (const auto& [k, v] : extra) meta[k] = v;
  return safetensors_bytes(t, meta);
}

std::string data_digest(const TrainData& d) {
  std::string bytes(reinterpret_cast<const char*>(d.train.data()), d.train.size() * 4);
  bytes.append(reinterpret_cast<const char*>(d.held.data()), d.held.size() * 4);
  return sha256_hex(bytes);
}

std::string checkpoint_bytes(const TrainConfig& c, const TrainData& d, const TrainState& s, double seconds) {
  const int64_t P = int64_t(s.params.size());
  const std::vector<float>* parts[] = {&s.params, &s.adam_m, &s.adam_v, &s.ema};
  std::vector<TensorOut> t;
  for (int i = 0; i < 4; ++i) t.push_back(tensor(kStateTensors[i], {P}, parts[i]->data(), parts[i]->size()));
  std::map<std::string, std::string> meta = config_metadata(c);
  for (const auto& [k, v] : data_metadata(d)) meta[k] = v;
  meta["kind"] = kCheckpointKind;
  meta["step"] = std::to_string(s.step);
  meta["data_sha256"] = data_digest(d);
  meta["train_seconds"] = std::to_string(seconds);
  meta["rng"] = "Philox4x32-10, key = seed, counter-based: the state is the step";
  return safetensors_bytes(t, meta);
}

Checkpoint read_checkpoint(const std::string& path, const std::string& arg) {
  const std::string label = arg + " " + path;
  const SafetensorsFile f = [&] {
    try {
      return SafetensorsFile::open(path);
    } catch (const InvalidInput& e) {
      throw InvalidInput(arg + ": " + e.what());
    }
  }();
  const auto& meta = f.metadata();
  const auto kind = meta.find("kind");
  if (kind == meta.end() || kind->second != kCheckpointKind)
    throw InvalidInput(label + " is not a training checkpoint (its __metadata__ kind is not " +
                       std::string(kCheckpointKind) + ")");
  Checkpoint ck;
  ck.config = config_from_metadata(meta, label);
  ck.dim = std::atoi(meta.count("dim") ? meta.at("dim").c_str() : "0");
  ck.state.step = std::atoll(meta.count("step") ? meta.at("step").c_str() : "-1");
  ck.data_sha256 = meta.count("data_sha256") ? meta.at("data_sha256") : "";
  ck.seconds = meta.count("train_seconds") ? std::atof(meta.at("train_seconds").c_str()) : 0.0;
  if (!(ck.seconds >= 0) || !std::isfinite(ck.seconds)) ck.seconds = 0;
  std::vector<float>* parts[] = {&ck.state.params, &ck.state.adam_m, &ck.state.adam_v, &ck.state.ema};
  for (int i = 0; i < 4; ++i) *parts[i] = f.read_float(kStateTensors[i]);
  const MlpLayout L(ck.dim, ck.config.hidden);
  if (ck.dim < 1 || ck.dim > kMaxDataDim || ck.state.step < 0 || ck.state.step > ck.config.steps ||
      ck.state.params.size() != L.size || ck.state.adam_m.size() != L.size || ck.state.adam_v.size() != L.size ||
      ck.state.ema.size() != L.size)
    throw InvalidInput(label + ": the step, dim or state tensors disagree with the settings (dim " +
                       std::to_string(ck.dim) + ", hidden " + std::to_string(ck.config.hidden) + ", step " +
                       std::to_string(ck.state.step) + ")");
  return ck;
}

}  // namespace diffscope::train
