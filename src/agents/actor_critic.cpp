#include "agents/actor_critic.hpp"

#include "memory/registry.hpp"

namespace rlm::agents {
namespace {

torch::nn::Linear orthogonal_linear(int64_t in, int64_t out) {
  torch::nn::Linear layer(in, out);
  torch::nn::init::orthogonal_(layer->weight);
  return layer;
}

torch::nn::Sequential mlp_head(int64_t in, const std::vector<int>& sizes, int64_t out) {
  torch::nn::Sequential seq;
  for (int size : sizes) {
    seq->push_back(orthogonal_linear(in, size));
    seq->push_back(torch::nn::LeakyReLU());
    in = size;
  }
  torch::nn::Linear last(in, out);
  torch::nn::init::normal_(last->weight, 0.0, 0.01);
  seq->push_back(last);
  return seq;
}

}  // namespace

ActorCriticImpl::ActorCriticImpl(int64_t obs_size, int64_t num_logits, const ModelConfig& config) {
  feature_map_ = register_module(
      "feature_map",
      torch::nn::Sequential(orthogonal_linear(obs_size, config.feature_size),
                            torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.feature_size})
                                                     .elementwise_affine(false))));
  pre_ = register_module("pre", torch::nn::Sequential(orthogonal_linear(config.feature_size, config.preprocessor_size),
                                                      torch::nn::LeakyReLU()));
  memory_ = register_module("memory", memory::make_memory(config.memory, config.preprocessor_size));
  actor_ = register_module("actor", mlp_head(memory_->output_size(), config.head_sizes, num_logits));
  critic_ = register_module("critic", mlp_head(memory_->output_size(), config.head_sizes, 1));
}

ActorCriticOutput ActorCriticImpl::forward(const torch::Tensor& obs, const memory::MemoryState& state,
                                           const torch::Tensor& starts) {
  auto z = pre_->forward(feature_map_->forward(obs));
  auto mem = memory_->forward(z, state, starts);
  return {actor_->forward(mem.y), critic_->forward(mem.y).squeeze(-1), std::move(mem.state)};
}

memory::MemoryState ActorCriticImpl::initial_state(int64_t batch, const torch::Device& device) const {
  return memory_->initial_state(batch, device);
}

}  // namespace rlm::agents
