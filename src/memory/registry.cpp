#include "memory/registry.hpp"

#include <functional>
#include <map>

#include "core/error.hpp"
#include "memory/ffm.hpp"
#include "memory/gru.hpp"
#include "memory/kf.hpp"
#include "memory/shm.hpp"
#include "memory/spiking.hpp"
#include "memory/stm.hpp"

namespace rlm::memory {
namespace {

using Factory = std::function<std::shared_ptr<Memory>(const MemoryConfig&, int64_t)>;

const std::map<std::string, Factory>& factories() {
  static const std::map<std::string, Factory> table = {
      {"gru", [](const MemoryConfig& c, int64_t in) { return std::make_shared<Gru>(in, c.hidden_size); }},
      {"shm",
       [](const MemoryConfig& c, int64_t in) {
         ShmOptions o;
         o.memory_size = c.hidden_size;
         o.output_size = c.shm.output_size;
         o.num_thetas = c.shm.num_thetas;
         o.calibration = c.shm.calibration;
         o.theta_sampling = c.shm.theta_sampling;
         o.state_clamp = c.shm.state_clamp;
         o.shortcut = c.shm.shortcut;
         return std::make_shared<Shm>(in, o);
       }},
      {"ffm",
       [](const MemoryConfig& c, int64_t in) {
         FfmOptions o;
         o.memory_size = c.ffm.memory_size;
         o.context_size = c.ffm.context_size;
         o.output_size = c.hidden_size;
         o.max_period = c.ffm.max_period;
         o.init = c.ffm.init == "paper"     ? FfmInit::kPaper
                  : c.ffm.init == "periods" ? FfmInit::kPeriods
                                            : FfmInit::kCode;
         o.conjugate_frequency = c.ffm.conjugate_frequency;
         o.flatten = c.ffm.flatten == "concatenated" ? FfmFlatten::kConcatenated : FfmFlatten::kInterleaved;
         o.decay_shape = c.ffm.decay_shape == "hadamard" ? FfmDecayShape::kHadamard : FfmDecayShape::kOuter;
         o.double_precision = c.ffm.double_precision;
         o.input_gate = c.ffm.input_gate;
         o.output_gate = c.ffm.output_gate;
         o.oscillate = c.ffm.oscillate;
         o.learn_oscillate = c.ffm.learn_oscillate;
         o.decay = c.ffm.decay;
         o.learn_decay = c.ffm.learn_decay;
         o.clamp_writeback = c.ffm.clamp_writeback;
         return std::make_shared<Ffm>(in, o);
       }},
      {"kf",
       [](const MemoryConfig& c, int64_t in) {
         KfOptions o;
         o.hidden_size = c.hidden_size;
         o.state_size = c.kf.state_size;
         o.num_layers = c.kf.num_layers;
         o.variant = parse_kf_variant(c.kf.variant);
         o.rms_norm = c.kf.rms_norm;
         o.input_lag = c.kf.input_lag;
         o.process_noise = parse_kf_process_noise(c.kf.process_noise);
         o.output_features = parse_kf_output_features(c.kf.output_features);
         return std::make_shared<Kf>(in, o);
       }},
      {"spiking",
       [](const MemoryConfig& c, int64_t in) {
         SpikingOptions o;
         o.hidden_size = c.hidden_size;
         o.output_size = c.spiking.output_size;
         o.leak_init = c.spiking.leak_init;
         o.theta = c.spiking.theta;
         o.noise_low = c.spiking.noise_low;
         o.noise_high = c.spiking.noise_high;
         o.forget_gate = c.spiking.forget_gate == "lru" ? SpikingForgetGate::kLru : SpikingForgetGate::kInputDependent;
         o.surrogate = c.spiking.surrogate == "gaussian" ? SpikingSurrogate::kGaussian
                       : c.spiking.surrogate == "none"   ? SpikingSurrogate::kNone
                                                         : SpikingSurrogate::kAtan;
         o.gate = c.spiking.gate == "sigmoid" ? SpikingGate::kSigmoid : SpikingGate::kSpike;
         return std::make_shared<Spiking>(in, o);
       }},
      {"stm",
       [](const MemoryConfig& c, int64_t in) {
         StmOptions o;
         o.item_size = c.stm.item_size;
         o.num_slots = c.stm.num_slots;
         o.rel_size = c.stm.rel_size;
         o.output_size = c.hidden_size;
         o.carry_relational = c.stm.carry_relational;
         o.gated = c.stm.gated;
         o.qkv_norm = c.stm.qkv_norm == "row"      ? StmOptions::QkvNorm::kRow
                      : c.stm.qkv_norm == "vector" ? StmOptions::QkvNorm::kVector
                                                   : StmOptions::QkvNorm::kMatrix;
         return std::make_shared<Stm>(in, o);
       }},
  };
  return table;
}

}  // namespace

std::shared_ptr<Memory> make_memory(const MemoryConfig& config, int64_t input_size) {
  const auto it = factories().find(config.type);
  if (it == factories().end()) throw ConfigError("model.memory.type: unknown memory backend '" + config.type + "'");
  return it->second(config, input_size);
}

std::vector<std::string> memory_types() {
  std::vector<std::string> out;
  for (const auto& [name, _] : factories()) out.push_back(name);
  return out;
}

}  // namespace rlm::memory
