#include "agents/actor_critic.hpp"

#include <cmath>

#include "memory/registry.hpp"
#include "nn/linear.hpp"

namespace rlm::agents {
namespace {

rlm::nn::Linear orthogonal_linear(int64_t in, int64_t out) {
  rlm::nn::Linear layer(in, out);
  torch::nn::init::orthogonal_(layer->weight);
  return layer;
}

void push_activation(torch::nn::Sequential& seq, const std::string& name) {
  if (name == "leaky_relu") seq->push_back(torch::nn::LeakyReLU());
  if (name == "relu") seq->push_back(torch::nn::ReLU());
  // "none": nothing
}

torch::nn::Sequential mlp_head(int64_t in, const std::vector<int>& sizes, int64_t out, const std::string& activation) {
  torch::nn::Sequential seq;
  for (int size : sizes) {
    seq->push_back(orthogonal_linear(in, size));
    push_activation(seq, activation);
    in = size;
  }
  rlm::nn::Linear last(in, out);
  torch::nn::init::normal_(last->weight, 0.0, 0.01);
  seq->push_back(last);
  return seq;
}

// The rest of `seq` after its first module, applied to that module's output.
torch::Tensor forward_after_first(torch::nn::Sequential& seq, torch::Tensor x) {
  for (auto it = seq->begin() + 1; it != seq->end(); ++it) x = it->forward(x);
  return x;
}

}  // namespace

ActorCriticImpl::ActorCriticImpl(const ObservationLayout& obs, int64_t num_logits, const ModelConfig& config) {
  if (obs.has_image()) image_encoder_ = register_module("image_encoder", ImageEncoder(obs));
  const int64_t obs_size = image_encoder_ ? image_encoder_->output_size() : obs.size;
  feature_map_ = register_module(
      "feature_map",
      torch::nn::Sequential(
          orthogonal_linear(obs_size, config.ppo.feature_size),
          torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.ppo.feature_size}).elementwise_affine(false))));
  if (config.ppo.embedding == "sine") {
    // positional_encoding of proroklab/popgym@410d5aa:popgym/baselines/models/embeddings.py: PE[p, 2k] = sin(p·d_k),
    // PE[p, 2k+1] = cos(p·d_k), d_k = exp(−2k·ln(max_len)/E) (the base is max_len, not 10000); frozen. s starts at 0.5.
    const int64_t rows = config.ppo.embedding_max_len, width = config.ppo.feature_size;
    auto position = torch::arange(rows, torch::kFloat64).unsqueeze(1);
    auto rate =
        torch::exp(torch::arange(0, width, 2, torch::kFloat64) * (-std::log(static_cast<double>(rows)) / width));
    auto table = torch::zeros({rows, width}, torch::kFloat64);
    table.index_put_({torch::indexing::Slice(), torch::indexing::Slice(0, torch::indexing::None, 2)},
                     torch::sin(position * rate));
    table.index_put_({torch::indexing::Slice(), torch::indexing::Slice(1, torch::indexing::None, 2)},
                     torch::cos(position * rate).slice(1, 0, width / 2));
    sine_table_ = register_buffer("sine_table", table.to(torch::kFloat32));
    embedding_scale_ = register_parameter("embedding_scale", torch::full({1}, 0.5));
  }
  torch::nn::Sequential pre(orthogonal_linear(config.ppo.feature_size, config.ppo.preprocessor_size));
  push_activation(pre, config.ppo.activation);
  pre_ = register_module("pre", pre);
  memory_ = register_module("memory", memory::make_memory(config.memory, config.ppo.preprocessor_size));
  int64_t features = memory_->output_size();
  if (config.ppo.postprocessor_size > 0) {
    torch::nn::Sequential post(orthogonal_linear(features, config.ppo.postprocessor_size));
    push_activation(post, config.ppo.activation);
    post_ = register_module("post", post);
    features = config.ppo.postprocessor_size;
  }
  actor_ = register_module("actor", mlp_head(features, config.ppo.head_sizes, num_logits, config.ppo.head_activation));
  critic_ = register_module("critic", mlp_head(features, config.ppo.head_sizes, 1, config.ppo.head_activation));
}

ActorCriticOutput ActorCriticImpl::forward(const torch::Tensor& obs, const memory::MemoryState& state,
                                           const torch::Tensor& starts) {
  auto x = feature_map_->forward(image_encoder_ ? image_encoder_->forward(obs) : obs);
  memory::MemoryState memory_state = state;
  torch::Tensor count;
  if (sine_table_.defined()) {
    count = memory_state.tensors.back();
    memory_state.tensors.pop_back();
    auto [positions, next_count] = episode_positions(starts, count);
    count = next_count;
    const int64_t last_row = sine_table_.size(0) - 1;
    auto pe = sine_table_.index_select(0, positions.clamp_max(last_row).reshape({-1})).view_as(x);
    {
      // The reference clamps s in place on every call (so a step outside [0, 1] is undone, not just masked).
      torch::NoGradGuard no_grad;
      embedding_scale_.clamp_(0.0, 1.0);
    }
    x = x * (1 - embedding_scale_) + pe * embedding_scale_;
  }
  auto z = pre_->forward(x);
  // The layers after the memory start with Linears: they take the memory's output layer through
  // nn::linear_after_affine (SHM's 1024-wide output is never formed in training), the actor's and the critic's first
  // Linears as one GEMM.
  auto mem = memory_->forward_affine(z, memory_state, starts);
  if (count.defined()) mem.state.tensors.push_back(count);
  torch::Tensor features = mem.read, affine_weight = mem.weight, affine_bias = mem.bias;  // features = read·Wᵀ + b
  if (post_) {
    const auto post0 = post_->ptr<rlm::nn::LinearImpl>(0);
    features = forward_after_first(
        post_, nn::linear_after_affine(features, affine_weight, affine_bias, post0->weight, post0->bias));
    affine_weight = affine_bias = torch::Tensor();
  }
  const auto actor0 = actor_->ptr<rlm::nn::LinearImpl>(0), critic0 = critic_->ptr<rlm::nn::LinearImpl>(0);
  const auto both =
      nn::linear_after_affine(features, affine_weight, affine_bias, torch::cat({actor0->weight, critic0->weight}),
                              torch::cat({actor0->bias, critic0->bias}));
  // One split rather than two narrows: its backward writes the fused gradient once (a cat), where each narrow's
  // backward zero-fills a full-width gradient and autograd then adds the two.
  const auto halves = both.split_with_sizes({actor0->weight.size(0), critic0->weight.size(0)}, -1);
  return {forward_after_first(actor_, halves[0]), forward_after_first(critic_, halves[1]).squeeze(-1),
          std::move(mem.state)};
}

memory::MemoryState ActorCriticImpl::initial_state(int64_t batch, const torch::Device& device) const {
  auto state = memory_->initial_state(batch, device);
  if (sine_table_.defined())
    state.tensors.push_back(torch::zeros({batch}, torch::TensorOptions().dtype(torch::kLong).device(device)));
  return state;
}

std::pair<torch::Tensor, torch::Tensor> episode_positions(const torch::Tensor& starts, const torch::Tensor& count) {
  const int64_t steps = starts.size(0);
  const auto t = torch::arange(steps, starts.options().dtype(torch::kLong)).unsqueeze(1).expand_as(starts);
  // The latest start at or before each step (−1: none in this call, so the count carries on).
  const auto last_start = std::get<0>(torch::where(starts, t, torch::full_like(t, -1)).cummax(0));
  const auto positions = torch::where(last_start >= 0, t - last_start, count.unsqueeze(0) + t);
  return {positions, positions[steps - 1] + 1};
}

}  // namespace rlm::agents
