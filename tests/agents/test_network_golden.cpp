// The whole actor-critic of each reproduction config against the authors' RLlib model:
// tests/data/network_golden/<case>.{pt,json}, recorded by scripts/record_network_golden.py from their code (the README
// there names each source as repo@commit:path). Each case builds our ActorCritic from the config file, loads every one
// of the authors' parameters through an explicit name map (each of theirs and each of ours covered exactly once),
// runs the training forward on the recorded whole episodes from the zero state and compares the logits, the values and
// the gradients of loss = Σ logits ⊙ P_logits + Σ values ⊙ P_values. A second test builds our network under many
// seeds and compares each parameter's init statistics (mean, std, max |·|) with those of the authors' init.
#include <torch/torch.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "agents/actor_critic.hpp"
#include "agents/experiment_config.hpp"
#include "agents/image_encoder.hpp"
#include "envs/registry.hpp"
#include "envs/vec_env.hpp"
#include "golden_trace.hpp"

using rlm::test::GoldenTrace;
using rlm::test::ParameterLink;

namespace {

std::filesystem::path source_dir() {
  const char* root = std::getenv("RLM_SOURCE_DIR");
  return root ? root : ".";
}

GoldenTrace load_network_trace(const std::string& name) { return rlm::test::load_golden_trace(name, "network_golden"); }

struct NetworkCase {
  std::string trace;   ///< tests/data/network_golden/<trace>.{pt,json}
  std::string config;  ///< the reproduction config, relative to the repository root
  std::vector<ParameterLink> links;
  double forward_tolerance = 1e-5;   ///< logits and values, relative to their largest magnitude
  double gradient_tolerance = 1e-4;  ///< every parameter's gradient
};

// BaseModel's trunk and heads in SHM's train_popgym.py layout: feature_map = Sequential(Linear, LayerNorm),
// pre = Sequential(Linear, ReLU), post = Sequential(Linear, ReLU), actor/critic = Sequential(config Linear(64, 64),
// final Linear). Ours has the same module indices (head_activation none adds no module between the two Linears).
std::vector<ParameterLink> shm_trunk_links() {
  std::vector<ParameterLink> links;
  for (const char* p : {"feature_map.0", "pre.0", "post.0", "actor.0", "actor.1", "critic.0", "critic.1"})
    for (const char* w : {".weight", ".bias"}) links.push_back({std::string(p) + w, std::string(p) + w});
  return links;
}

std::vector<ParameterLink> with(std::vector<ParameterLink> links, const std::vector<ParameterLink>& more) {
  links.insert(links.end(), more.begin(), more.end());
  return links;
}

// Their BaseModel always creates embedding_strength (scale_embedding defaults to True); the GRU and FFM models never
// read it (no embedding), so it has no gradient and no counterpart in ours (json grad_stored "none").
std::vector<NetworkCase> network_cases() {
  const int64_t h = 128;  // SHM's H
  return {
      {"shm_table1_gru", "configs/repro/shm_table1/gru/repeat_previous_easy.yaml",
       with(shm_trunk_links(),
            {
                {"core.weight_ih_l0", "memory.gru.weight_ih_l0"},
                {"core.weight_hh_l0", "memory.gru.weight_hh_l0"},
                {"core.bias_ih_l0", "memory.gru.bias_ih_l0"},
                {"core.bias_hh_l0", "memory.gru.bias_hh_l0"},
            })},
      // Their closed form runs in complex128, our scan in complex64 (double_precision false): ~1e-6 of the largest
      // logit or value here, and the gradients of a and b ~2e-5 (tests/data/memory_golden/README.md).
      {"shm_table1_ffm", "configs/repro/shm_table1/ffm/repeat_previous_easy.yaml",
       with(shm_trunk_links(),
            {
                {"core.pre.weight", "memory.pre.weight"},
                {"core.pre.bias", "memory.pre.bias"},
                {"core.ffa.a", "memory.a"},
                {"core.ffa.b", "memory.b"},
                {"core.mix.weight", "memory.mix.weight"},
                {"core.mix.bias", "memory.mix.bias"},
            }),
       2e-5, 2e-4},
      // SHMAgent's cell parameters sit on the model itself (no core. prefix); its five bias-free Linears are the row
      // blocks of our one fused projection, in the order k, q, v, vc, η. embedding_strength is the sine mix weight s.
      {"shm_table1_shm", "configs/repro/shm_table1/shm/repeat_previous_easy.yaml",
       with(shm_trunk_links(),
            {
                {"embedding_strength", "embedding_scale"},
                {"norm.weight", "memory.norm.weight"},
                {"norm.bias", "memory.norm.bias"},
                {"key.weight", "memory.projections.weight", 0, h},
                {"query.weight", "memory.projections.weight", h, h},
                {"value.weight", "memory.projections.weight", 2 * h, h},
                {"vc_net.weight", "memory.projections.weight", 3 * h, h},
                {"eta.weight", "memory.projections.weight", 4 * h, 1},
                {"theta_matrix", "memory.theta_table"},
                {"shortcut.weight", "memory.shortcut.weight"},
                {"shortcut.bias", "memory.shortcut.bias"},
                {"out.weight", "memory.out.weight"},
                {"out.bias", "memory.out.bias"},
            })},
      // proroklab/ffm ppo.py: actor = Sequential(Sequential(Linear, LReLU, Linear, LReLU), final); ours is one
      // Sequential(Linear, LReLU, Linear, LReLU, final). No postprocessor (Identity).
      {"ffm_paper",
       "configs/repro/ffm_paper/repeat_previous.yaml",
       {
           {"feature_map.0.weight", "feature_map.0.weight"},
           {"feature_map.0.bias", "feature_map.0.bias"},
           {"pre.0.weight", "pre.0.weight"},
           {"pre.0.bias", "pre.0.bias"},
           {"core.pre.weight", "memory.pre.weight"},
           {"core.pre.bias", "memory.pre.bias"},
           {"core.ffa.a", "memory.a"},
           {"core.ffa.b", "memory.b"},
           {"core.mix.weight", "memory.mix.weight"},
           {"core.mix.bias", "memory.mix.bias"},
           {"actor.0.0.weight", "actor.0.weight"},
           {"actor.0.0.bias", "actor.0.bias"},
           {"actor.0.2.weight", "actor.2.weight"},
           {"actor.0.2.bias", "actor.2.bias"},
           {"actor.1.weight", "actor.4.weight"},
           {"actor.1.bias", "actor.4.bias"},
           {"critic.0.0.weight", "critic.0.weight"},
           {"critic.0.0.bias", "critic.0.bias"},
           {"critic.0.2.weight", "critic.2.weight"},
           {"critic.0.2.bias", "critic.2.bias"},
           {"critic.1.weight", "critic.4.weight"},
           {"critic.1.bias", "critic.4.bias"},
       },
       2e-5,
       2e-4},
  };
}

/// Our network for `c`'s config, with the observation layout of our env under that config's wrappers. Checks that our
/// env feeds what the recorded model read: the same width, and (through the wrappers' blocks after the card's one-hot)
/// the same previous-action and is_t0 encoding at the first two steps of a recorded episode.
struct Built {
  rlm::Config config;
  rlm::agents::ActorCritic model{nullptr};
};

Built build(const NetworkCase& c, const GoldenTrace& trace, bool check_env) {
  Built b;
  b.config = rlm::load_config(source_dir() / c.config, {"experiment.device=cpu"});
  rlm::envs::VecEnv envs(b.config.env.id, 1, 1, 0, rlm::envs::wrapper_options(b.config.env));
  const auto layout = rlm::agents::observation_layout(envs, b.config.model, b.config.env.markovian == "partial");
  const auto& input = trace.at("input");  // [T, B, D]
  const int64_t width = input.size(2), num_logits = trace.meta.at("A").get<int64_t>();
  REQUIRE(layout.size == width);
  REQUIRE(envs.action_space().to_string() == "Discrete(" + std::to_string(num_logits) + ")");
  if (check_env) {
    envs.reset();
    const auto obs = [&] {
      const auto o = envs.obs();
      return torch::tensor(std::vector<float>(o.begin(), o.end()));
    };
    const auto first = obs();
    // The card: a one-hot of 4 (Discrete(4) suit) in both.
    CHECK(first.slice(0, 0, 4).sum().item<float>() == 1.0f);
    CHECK(first.slice(0, 0, 4).max().item<float>() == 1.0f);
    if (width > 4) {
      // After the card: [previous action one-hot 4 | is_t0 one-hot 2] (ffm_paper): the null action 0 and is_t0 = 1
      // at t = 0; at t = 1 the action taken and is_t0 = 0.
      CHECK(torch::equal(first.slice(0, 4), input[0][0].slice(0, 4)));
      const int64_t action = input[1][0].slice(0, 4, 8).argmax().item<int64_t>();
      const std::vector<float> step{static_cast<float>(action)};
      envs.step(step);
      CHECK(torch::equal(obs().slice(0, 4), input[1][0].slice(0, 4)));
    }
  }
  b.model = rlm::agents::ActorCritic(layout, num_logits, b.config.model);
  return b;
}

torch::Tensor first_step_starts(int64_t steps, int64_t batch) {
  auto starts = torch::zeros({steps, batch}, torch::kBool);
  starts[0].fill_(true);  // each column is one whole episode from the zero state, as RLlib trains on them
  return starts;
}

}  // namespace

TEST_CASE("each reproduction config's whole network equals the authors' RLlib model", "[golden][network]") {
  for (const auto& c : network_cases()) {
    DYNAMIC_SECTION(c.trace) {
      const auto trace = load_network_trace(c.trace);
      auto built = build(c, trace, /*check_env=*/true);
      auto& model = built.model;
      rlm::test::load_parameters(*model, trace, c.links);

      // The sine table (their frozen nn.Embedding, our buffer): the rows the episodes read. Theirs is computed in
      // float32, ours in float64 and rounded: ~2e-6 apart at t = 50.
      if (trace.has("buffer/embedding.weight")) {
        const auto& rows = trace.at("buffer/embedding.weight");
        const auto ours = model->named_buffers()["sine_table"].narrow(0, 0, rows.size(0));
        rlm::test::check_recorded(trace, "buffer/embedding.weight", ours, 1e-5);
      }

      const auto& x = trace.at("input");
      const int64_t steps = x.size(0), batch = x.size(1);
      const auto out = model->forward(x, model->initial_state(batch, torch::kCPU), first_step_starts(steps, batch));
      rlm::test::check_recorded(trace, "logits", out.logits, c.forward_tolerance);
      rlm::test::check_recorded(trace, "values", out.values, c.forward_tolerance);

      const auto loss =
          (out.logits * trace.at("projection/logits")).sum() + (out.values * trace.at("projection/values")).sum();
      loss.backward();
      const double their_loss = trace.at("loss").item<double>();
      INFO(c.trace << ": loss " << loss.item<double>() << " vs " << their_loss);
      CHECK(std::abs(loss.item<double>() - their_loss) <= c.forward_tolerance * std::abs(their_loss) + 1e-5);
      auto ours = model->named_parameters();
      for (const auto& link : c.links) {
        const auto theirs = trace.parameter(link.theirs);  // held: its sizes() outlive the call below
        const auto& grad = ours[link.ours].grad();
        INFO(c.trace << ": gradient of " << link.theirs << " (ours " << link.ours << ")");
        REQUIRE(grad.defined());
        rlm::test::check_parameter_gradient(trace, link.theirs, rlm::test::linked_view(grad, link, theirs.sizes()),
                                            c.gradient_tolerance);
      }
    }
  }
}

namespace {

struct Stats {
  double mean, std, maxabs;
};

// As the recorder: float64, population std over every element.
Stats tensor_stats(const torch::Tensor& t) {
  const auto v = t.detach().to(torch::kFloat64).reshape({-1});
  const double mean = v.mean().item<double>();
  return {mean, (v - mean).square().mean().sqrt().item<double>(), v.abs().max().item<double>()};
}

double average(const std::vector<double>& xs) {
  double s = 0;
  for (double x : xs) s += x;
  return s / static_cast<double>(xs.size());
}

double sample_sd(const std::vector<double>& xs) {
  const double m = average(xs);
  double s = 0;
  for (double x : xs) s += (x - m) * (x - m);
  return xs.size() > 1 ? std::sqrt(s / static_cast<double>(xs.size() - 1)) : 0.0;
}

// Two-sample test of the mean over seeds of one statistic: |ours − theirs| ≤ 6 standard errors of the difference
// (each side's spread over its own seeds), plus a float32 rounding floor for statistics that do not vary (orthogonal
// rms, LayerNorm ones, FFM's linspace). 6 rather than 5: the spreads are themselves estimated from 32 seeds.
void check_statistic(const std::string& label, const nlohmann::json& theirs, int64_t their_seeds,
                     const std::vector<double>& ours) {
  const double m_t = theirs.at("mean").get<double>(), sd_t = theirs.at("sd").get<double>();
  const double m_o = average(ours), sd_o = sample_sd(ours);
  const double se =
      std::sqrt(sd_t * sd_t / static_cast<double>(their_seeds) + sd_o * sd_o / static_cast<double>(ours.size()));
  const double tolerance = 6 * se + 1e-5 * std::abs(m_t) + 1e-7;
  INFO(label << ": ours " << m_o << " (sd " << sd_o << " over " << ours.size() << " seeds), theirs " << m_t << " (sd "
             << sd_t << " over " << their_seeds << "), tolerance " << tolerance);
  CHECK(std::abs(m_o - m_t) <= tolerance);
}

}  // namespace

TEST_CASE("each reproduction config's network starts from the authors' init distribution", "[golden][network][init]") {
  constexpr int kSeeds = 32;
  for (const auto& c : network_cases()) {
    DYNAMIC_SECTION(c.trace) {
      const auto trace = load_network_trace(c.trace);
      const auto& init = trace.meta.at("init_stats");
      const auto& their_params = init.at("parameters");
      const int64_t their_seeds = init.at("num_seeds").get<int64_t>();
      std::map<std::string, std::vector<Stats>> ours;
      for (int seed = 0; seed < kSeeds; ++seed) {
        torch::manual_seed(1000 + seed);
        auto built = build(c, trace, /*check_env=*/false);
        auto params = built.model->named_parameters();
        for (const auto& link : c.links) {
          const auto shape = their_params.at(link.theirs).at("shape").get<std::vector<int64_t>>();
          const auto view = rlm::test::linked_view(params[link.ours], link, shape);
          ours[link.theirs].push_back(tensor_stats(view));
          // A parameter whose init is the same under every seed (LayerNorm, FFM's a and b, s = 0.5): value by value.
          if (seed == 0 && trace.has("init_value/" + link.theirs)) {
            const auto& value = trace.at("init_value/" + link.theirs);
            const double scale = std::max(1e-3, value.abs().max().item<double>());
            INFO(c.trace << ": init of " << link.theirs);
            CHECK((view.detach() - value).abs().max().item<double>() <= 1e-6 * scale);
          }
        }
      }
      for (const auto& link : c.links) {
        const auto& theirs = their_params.at(link.theirs);
        const auto& samples = ours[link.theirs];
        INFO(c.trace << ": " << link.theirs << " (ours " << link.ours
                     << "), their init: " << theirs.at("init").get<std::string>());
        std::vector<double> means, stds, maxabs;
        for (const auto& s : samples) {
          means.push_back(s.mean);
          stds.push_back(s.std);
          maxabs.push_back(s.maxabs);
        }
        check_statistic("mean", theirs.at("mean"), their_seeds, means);
        check_statistic("std", theirs.at("std"), their_seeds, stds);
        check_statistic("max |.|", theirs.at("maxabs"), their_seeds, maxabs);
      }
    }
  }
}
