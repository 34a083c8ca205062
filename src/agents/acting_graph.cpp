#include "agents/acting_graph.hpp"

#include <fmt/format.h>

#include <cmath>

#include "memory/memory.hpp"

namespace rlm::agents {
namespace {

std::vector<torch::Tensor> flatten(const ActorCriticOutput& out) {
  std::vector<torch::Tensor> tensors = {out.logits, out.values};
  tensors.insert(tensors.end(), out.state.tensors.begin(), out.state.tensors.end());
  return tensors;
}

ActorCriticOutput unflatten(const std::vector<torch::Tensor>& tensors) {
  return {tensors[0], tensors[1], {std::vector<torch::Tensor>(tensors.begin() + 2, tensors.end())}};
}

/// The largest |graph − eager| over the outputs relative to the eager values' scale, or +inf where they cannot be
/// compared (a shape or dtype differs).
double largest_difference(const std::vector<torch::Tensor>& graph, const std::vector<torch::Tensor>& eager) {
  if (graph.size() != eager.size()) return INFINITY;
  double worst = 0.0;
  for (size_t i = 0; i < graph.size(); ++i) {
    if (graph[i].sizes() != eager[i].sizes() || graph[i].scalar_type() != eager[i].scalar_type()) return INFINITY;
    if (graph[i].numel() == 0) continue;
    const auto a = graph[i].to(torch::kDouble), b = eager[i].to(torch::kDouble);
    const double scale = std::max(1.0, b.abs().max().item<double>());
    worst = std::max(worst, (a - b).abs().max().item<double>() / scale);
  }
  return worst;
}

}  // namespace

ActingGraph::ActingGraph(ActorCritic model, torch::Device device, int64_t batch, int64_t obs_size)
    : model_(std::move(model)),
      obs_(torch::zeros({1, batch, obs_size}, torch::TensorOptions().dtype(torch::kFloat32).device(device))),
      starts_(torch::zeros({1, batch}, torch::TensorOptions().dtype(torch::kBool).device(device))),
      state_(model_->initial_state(batch, device)) {
  for (auto& t : state_.tensors) t = t.clone();  // the graph's own: written by advance() and set_state() only
}

uint64_t ActingGraph::memory_draws() const {
  uint64_t draws = 0;
  for (const auto& module : model_->modules()) {
    if (const auto* memory = dynamic_cast<const memory::Memory*>(module.get())) draws += memory->draws();
  }
  return draws;
}

void ActingGraph::set_state(const memory::MemoryState& state) {
  for (size_t i = 0; i < state_.tensors.size(); ++i) state_.tensors[i].copy_(state.tensors[i]);
}

void ActingGraph::advance() {
  for (size_t i = 0; i < state_.tensors.size(); ++i) state_.tensors[i].copy_(out_.state.tensors[i]);
}

const ActorCriticOutput& ActingGraph::step(const torch::Tensor& obs, const torch::Tensor& starts) {
  obs_[0].copy_(obs);
  starts_[0].copy_(starts);
  if (graph_ != nullptr) {
    graph_->replay();
  } else if (!eager_reason_.empty()) {
    out_ = model_->forward(obs_, state_, starts_);
  } else {
    decide();  // the first step
  }
  return out_;
}

void ActingGraph::decide() {
  const uint64_t draws_before = memory_draws();
  const ActorCriticOutput eager = model_->forward(obs_, state_, starts_);
  out_ = eager;
  if (memory_draws() != draws_before) {
    eager_reason_ = "the memory draws random numbers when acting, which a graph would replay unchanged";
    return;
  }
  // A graph replays CUDA work only: CPU ops in the captured function would run once, at capture, and never again.
  if (!obs_.is_cuda()) {
    eager_reason_ = "the model is not on a CUDA device";
    return;
  }
  if (!nn::CudaGraph::supported()) {
    eager_reason_ = "this build has no CUDA support";
    return;
  }
  auto graph = std::make_unique<nn::CudaGraph>();
  std::vector<torch::Tensor> outputs;
  try {
    outputs = graph->capture([&] { return flatten(model_->forward(obs_, state_, starts_)); });
    graph->replay();
  } catch (const c10::Error& e) {
    const std::string what = e.what_without_backtrace();
    eager_reason_ = "capture failed: " + what.substr(0, what.find('\n'));
    return;
  }
  const double difference = largest_difference(outputs, flatten(eager));
  if (!(difference <= 1e-5)) {
    eager_reason_ = fmt::format("the graph's first step differs from the eager one by {:.3g} (relative)", difference);
    return;
  }
  graph_ = std::move(graph);
  out_ = unflatten(outputs);
}

}  // namespace rlm::agents
