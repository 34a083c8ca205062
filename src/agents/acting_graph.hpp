// PPO's acting forward (the model stepped with T = 1 over every env at once) replayed from a CUDA graph
// (nn/cuda_graph.hpp), experiment.cuda_graphs. The graph reads static inputs (obs, starts, the recurrent state) and
// writes static outputs: a step copies the envs' obs in, replays and hands out the outputs, and advance() copies the
// state after the step back in as the next step's.
// The first step decides, and costs nothing where it says no: it runs the eager forward, whose output is that
// step's. If the forward drew random numbers (SHM's θ rows: Memory::draws()), a graph would replay the same draws, so
// acting stays eager, and the run's random streams are those of an eager run. Otherwise the forward is captured; if
// capture fails (an op that synchronises with the host or copies from it) or the first replay differs from the eager
// output beyond float rounding, acting stays eager too. The run's log says which, and why.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>

#include "agents/actor_critic.hpp"
#include "nn/cuda_graph.hpp"

namespace rlm::agents {

class ActingGraph {
 public:
  /// For `batch` envs with `obs_size` floats of observation each, acting with `model` (in eval mode, on the CUDA
  /// device `device`).
  ActingGraph(ActorCritic model, torch::Device device, int64_t batch, int64_t obs_size);

  /// Whether steps replay the graph (false before the first step, and for good once it decided against).
  bool replaying() const { return graph_ != nullptr; }
  /// Why acting is eager, once the first step decided so; empty otherwise.
  const std::string& eager_reason() const { return eager_reason_; }

  /// The state the next step starts from (copied).
  void set_state(const memory::MemoryState& state);
  /// One step: obs [B, obs_size] float and starts [B] bool, on the CPU. The output is valid until the next step.
  const ActorCriticOutput& step(const torch::Tensor& obs, const torch::Tensor& starts);
  /// Carries the last step's state into the next step.
  void advance();

 private:
  ActorCritic model_;
  torch::Tensor obs_, starts_;            // [1, B, obs_size], [1, B] on the device: the graph's inputs
  memory::MemoryState state_;             // the graph's state input
  std::unique_ptr<nn::CudaGraph> graph_;  // set once the first step decided to replay
  std::string eager_reason_;              // set once it decided against
  ActorCriticOutput out_;

  uint64_t memory_draws() const;
  /// The first step: eager, then the capture where it may; sets graph_ or eager_reason_.
  void decide();
};

}  // namespace rlm::agents
