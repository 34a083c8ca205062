// FFM backend (FFM paper §5, App. B): stepping equals sequence mode, resets equal a fresh state, the scan-based
// forward equals a plain loop of the paper's equations, gradients, parameter count and init values for POPGym sizes,
// the options that differ between paper and code, the ablation flags set from YAML, and a small supervised memory
// task learned on CPU.
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <cfloat>
#include <chrono>
#include <cmath>

#include "agents/experiment_config.hpp"
#include "memory/ffm.hpp"
#include "memory/registry.hpp"

using rlm::memory::Ffm;
using rlm::memory::FfmOptions;
using rlm::memory::MemoryState;

namespace {

FfmOptions small_options() {
  FfmOptions o;
  o.memory_size = 6;
  o.context_size = 3;
  o.output_size = 10;
  return o;
}

// A non-zero carried state, so the start-state aggregation (S_{-1} decays into every step) is exercised.
MemoryState random_state(int64_t batch, const FfmOptions& o) {
  return {{torch::complex(torch::randn({batch, o.memory_size, o.context_size}),
                          torch::randn({batch, o.memory_size, o.context_size}))}};
}

// The FFM paper's Eq. 11, 12, 15–18 as a plain float64 loop over time, reading the module's weights:
// x̃ = v ⊙ σ(gate_in); S_t = γ ⊙ S_{t-1} + x̃ 1ᵀ with γ_ij = exp(clamp(a_i) + i b_j) and S_{t-1} = 0 at starts;
// z = mix(interleaved Re/Im of S); y = LN(z) ⊙ σ(gate_out) + thru ⊙ (1 − σ(gate_out)).
torch::Tensor reference_forward(Ffm& ffm, const torch::Tensor& x, const torch::Tensor& s0,
                                const torch::Tensor& starts) {
  torch::NoGradGuard no_grad;
  const auto& o = ffm.options();
  const int64_t m = o.memory_size, c = o.context_size, d = o.output_size;
  const auto f64 = torch::kFloat64;
  auto w_pre = ffm.pre->weight.to(f64), b_pre = ffm.pre->bias.to(f64);
  auto w_mix = ffm.mix->weight.to(f64), b_mix = ffm.mix->bias.to(f64);
  auto alpha = ffm.a.to(f64).clamp(-ffm.limit(), -1e-8);
  auto omega = ffm.b.to(f64);
  auto gamma = torch::exp(torch::complex(alpha.unsqueeze(1).expand({m, c}), omega.unsqueeze(0).expand({m, c})));
  torch::Tensor s = s0.to(torch::kComplexDouble);
  std::vector<torch::Tensor> ys;
  for (int64_t t = 0; t < x.size(0); ++t) {
    auto p = torch::matmul(x[t].to(f64), w_pre.t()) + b_pre;
    auto v = p.narrow(-1, 0, m);
    auto thru = p.narrow(-1, m, d);
    auto in_gate = torch::sigmoid(p.narrow(-1, m + d, m));
    auto out_gate = torch::sigmoid(p.narrow(-1, 2 * m + d, d));
    auto keep = (~starts[t]).to(f64).view({-1, 1, 1});
    s = gamma * (s * keep) + (v * in_gate).unsqueeze(-1).to(torch::kComplexDouble);
    // Interleaved flatten: feature (i*c + j)*2 + {0: Re, 1: Im}.
    auto features = torch::stack({torch::real(s), torch::imag(s)}, -1).reshape({x.size(1), 2 * m * c});
    auto z = torch::matmul(features, w_mix.t()) + b_mix;
    auto mean = z.mean(-1, true);
    auto var = (z - mean).pow(2).mean(-1, true);
    auto ln = (z - mean) / torch::sqrt(var + 1e-5);
    ys.push_back(ln * out_gate + thru * (1 - out_gate));
  }
  return torch::stack(ys).to(torch::kFloat32);
}

double max_abs_diff(const torch::Tensor& x, const torch::Tensor& y) { return (x - y).abs().max().item<double>(); }

}  // namespace

TEST_CASE("ffm: stepping one step at a time equals one call over the sequence", "[memory][ffm]") {
  torch::manual_seed(11);
  const auto o = small_options();
  Ffm ffm(5, o);
  const int64_t steps = 14, batch = 4;
  auto x = torch::randn({steps, batch, 5});
  auto starts = torch::zeros({steps, batch}, torch::kBool);
  starts[0][0] = true;  // entries 1..3 start mid-episode with the carried state
  starts[4][1] = true;
  starts[9][0] = true;
  starts[9][2] = true;
  starts[13][3] = true;  // a reset at the last step

  const auto s0 = random_state(batch, o);
  auto whole = ffm.forward(x, s0, starts);
  REQUIRE(whole.y.sizes() == torch::IntArrayRef({steps, batch, 10}));
  REQUIRE(whole.state.tensors.size() == 1);
  REQUIRE(whole.state.tensors[0].sizes() == torch::IntArrayRef({batch, 6, 3}));
  CHECK(whole.state.tensors[0].scalar_type() == torch::kComplexFloat);

  MemoryState state = s0;
  std::vector<torch::Tensor> outs;
  for (int64_t t = 0; t < steps; ++t) {
    auto step = ffm.forward(x.slice(0, t, t + 1), state, starts.slice(0, t, t + 1));
    outs.push_back(step.y);
    state = step.state;
  }
  auto stepped = torch::cat(outs, 0);
  CHECK(max_abs_diff(whole.y, stepped) < 1e-5);
  CHECK(max_abs_diff(whole.state.tensors[0], state.tensors[0]) < 1e-5);

  // Two halves carrying the state equal the whole as well.
  auto first = ffm.forward(x.slice(0, 0, 6), s0, starts.slice(0, 0, 6));
  auto second = ffm.forward(x.slice(0, 6), first.state, starts.slice(0, 6));
  CHECK(max_abs_diff(whole.y, torch::cat({first.y, second.y}, 0)) < 1e-5);
}

TEST_CASE("ffm: sequences longer than max_len stay finite and match a split run", "[memory][ffm]") {
  torch::manual_seed(16);
  auto o = small_options();
  o.max_len = 64;  // the limit only bounds the decays; the scan itself needs no chunking
  Ffm ffm(3, o);
  auto x = torch::randn({300, 2, 3});
  auto starts = torch::zeros({300, 2}, torch::kBool);
  starts[0].fill_(true);
  auto whole = ffm.forward(x, ffm.initial_state(2, torch::kCPU), starts);
  CHECK(torch::isfinite(whole.y).all().item<bool>());
  auto first = ffm.forward(x.slice(0, 0, 64), ffm.initial_state(2, torch::kCPU), starts.slice(0, 0, 64));
  auto rest = ffm.forward(x.slice(0, 64), first.state, starts.slice(0, 64));
  CHECK(max_abs_diff(whole.y, torch::cat({first.y, rest.y}, 0)) < 1e-5);
}

TEST_CASE("ffm: a reset equals a fresh initial state", "[memory][ffm]") {
  torch::manual_seed(12);
  const auto o = small_options();
  Ffm ffm(4, o);
  auto prefix = torch::randn({5, 3, 4});
  auto episode = torch::randn({7, 3, 4});
  auto starts = torch::zeros({12, 3}, torch::kBool);
  starts[5].fill_(true);
  auto with_history = ffm.forward(torch::cat({prefix, episode}, 0), random_state(3, o), starts);
  auto fresh = ffm.forward(episode, ffm.initial_state(3, torch::kCPU), torch::zeros({7, 3}, torch::kBool));
  CHECK(max_abs_diff(with_history.y.slice(0, 5), fresh.y) < 1e-5);
  CHECK(max_abs_diff(with_history.state.tensors[0], fresh.state.tensors[0]) < 1e-5);
  // Without the reset the history changes the output, so the check above can fail.
  auto no_reset =
      ffm.forward(torch::cat({prefix, episode}, 0), random_state(3, o), torch::zeros({12, 3}, torch::kBool));
  CHECK(max_abs_diff(no_reset.y.slice(0, 5), fresh.y) > 1e-3);

  auto zeros = ffm.initial_state(2, torch::kCPU);
  REQUIRE(zeros.tensors.size() == 1);
  CHECK(zeros.tensors[0].sizes() == torch::IntArrayRef({2, 6, 3}));
  CHECK(zeros.tensors[0].scalar_type() == torch::kComplexFloat);
  CHECK(zeros.tensors[0].abs().sum().item<double>() == 0.0);
}

TEST_CASE("ffm: the scan-based forward equals a plain loop of the paper's equations", "[memory][ffm]") {
  torch::manual_seed(13);
  auto o = small_options();
  Ffm ffm(5, o);
  // Move a few decays out of the clamp range so the clamp is exercised too.
  {
    torch::NoGradGuard no_grad;
    ffm.a[0] = -2.0;
    ffm.a[1] = 0.3;
  }
  const int64_t steps = 40, batch = 3;
  auto x = torch::randn({steps, batch, 5});
  auto starts = torch::rand({steps, batch}) < 0.1;
  const auto s0 = random_state(batch, o);
  auto expected = reference_forward(ffm, x, s0.tensors[0], starts);
  auto got = ffm.forward(x, s0, starts);
  CHECK(max_abs_diff(got.y, expected) < 1e-4);

  o.double_precision = true;
  torch::manual_seed(13);
  Ffm ffm64(5, o);
  auto got64 = ffm64.forward(x, s0, starts);
  auto expected64 = reference_forward(ffm64, x, s0.tensors[0], starts);
  CHECK(max_abs_diff(got64.y, expected64) < 1e-4);
}

TEST_CASE("ffm: gradients reach every parameter", "[memory][ffm]") {
  torch::manual_seed(14);
  Ffm ffm(3, small_options());
  auto x = torch::randn({9, 2, 3});
  auto starts = torch::zeros({9, 2}, torch::kBool);
  starts[0].fill_(true);
  starts[5][1] = true;
  auto out = ffm.forward(x, ffm.initial_state(2, torch::kCPU), starts);
  (out.y * torch::randn_like(out.y)).sum().backward();
  const auto params = ffm.named_parameters();
  REQUIRE(params.size() == 6);  // pre.weight, pre.bias, a, b, mix.weight, mix.bias
  for (const auto& p : params) {
    INFO(p.key());
    REQUIRE(p.value().grad().defined());
    CHECK(p.value().grad().abs().sum().item<double>() > 0.0);
    CHECK(torch::isfinite(p.value().grad()).all().item<bool>());
  }
}

TEST_CASE("ffm: gradients match central differences in double precision", "[memory][ffm]") {
  torch::manual_seed(17);
  auto o = small_options();
  o.double_precision = true;
  Ffm ffm(3, o);
  ffm.to(torch::kFloat64);
  auto x = torch::randn({7, 2, 3}, torch::kFloat64);
  auto starts = torch::zeros({7, 2}, torch::kBool);
  starts[3][0] = true;
  const auto s0 = random_state(2, o);
  auto weights = torch::randn({7, 2, o.output_size}, torch::kFloat64);
  auto loss_of = [&] { return (ffm.forward(x, s0, starts).y * weights).sum(); };
  loss_of().backward();
  torch::NoGradGuard no_grad;
  const double eps = 1e-6;
  for (auto* p : {&ffm.a, &ffm.b, &ffm.pre->weight, &ffm.mix->bias}) {
    auto flat = p->view({-1});
    for (int64_t i = 0; i < std::min<int64_t>(flat.numel(), 4); ++i) {
      const double saved = flat[i].item<double>();
      flat[i] = saved + eps;
      const double up = loss_of().item<double>();
      flat[i] = saved - eps;
      const double down = loss_of().item<double>();
      flat[i] = saved;
      const double numeric = (up - down) / (2 * eps);
      CHECK(p->grad().view({-1})[i].item<double>() == Approx(numeric).epsilon(1e-5).margin(1e-7));
    }
  }
}

TEST_CASE("ffm: POPGym sizes give 140132 parameters and the code's a and b init", "[memory][ffm]") {
  Ffm ffm(128, FfmOptions{});  // m = 32, c = 4 (FFM paper App. D.2), d = 256 (proroklab/ffm@b3f94d2:models/ray_ffm.py)
  CHECK(ffm.output_size() == 256);
  int64_t count = 0;
  for (const auto& p : ffm.parameters()) count += p.numel();
  CHECK(count == 140132);
  CHECK(ffm.pre->weight.sizes() == torch::IntArrayRef({576, 128}));
  CHECK(ffm.mix->weight.sizes() == torch::IntArrayRef({256, 256}));
  // The init of proroklab/ffm@b3f94d2:aggregations.py (linspace) at t_e = 1024, β = 0.01 (FFM paper App. D.2).
  CHECK(ffm.limit() == Approx(0.683147).epsilon(1e-6));
  REQUIRE(ffm.a.sizes() == torch::IntArrayRef({32}));
  REQUIRE(ffm.b.sizes() == torch::IntArrayRef({4}));
  CHECK(ffm.a[0].item<double>() == Approx(-0.673147).epsilon(1e-5));
  CHECK(ffm.a[31].item<double>() == Approx(-0.0044972).epsilon(1e-4));
  CHECK(ffm.b[0].item<double>() == Approx(6.283185).epsilon(1e-6));
  CHECK(ffm.b[1].item<double>() == Approx(0.018372).epsilon(1e-4));
  CHECK(ffm.b[2].item<double>() == Approx(0.009199).epsilon(1e-4));
  CHECK(ffm.b[3].item<double>() == Approx(0.006136).epsilon(1e-4));

  FfmOptions pomdp;  // POMDP-Baselines row: h = 128, t_e = 128, L stays 1024; 53,732 parameters with input 64.
  pomdp.output_size = 128;
  pomdp.max_period = 128;
  Ffm small(64, pomdp);
  count = 0;
  for (const auto& p : small.parameters()) count += p.numel();
  CHECK(count == 53732);
  CHECK(small.a[0].item<double>() == Approx(-0.673147).epsilon(1e-5));
  CHECK(small.a[31].item<double>() == Approx(-0.035978).epsilon(1e-4));
  CHECK(small.b[1].item<double>() == Approx(0.144997).epsilon(1e-4));
}

TEST_CASE("ffm: paper-versus-code options", "[memory][ffm]") {
  torch::manual_seed(15);
  const int64_t steps = 8, batch = 2;
  auto x = torch::randn({steps, batch, 5});
  auto starts = torch::zeros({steps, batch}, torch::kBool);
  starts[3][1] = true;

  SECTION("Re-Im concatenation is the interleaved order with permuted mix weights") {
    auto o = small_options();
    torch::manual_seed(3);
    Ffm interleaved(5, o);
    o.flatten = rlm::memory::FfmFlatten::kConcatenated;
    torch::manual_seed(3);
    Ffm concatenated(5, o);
    const int64_t m = o.memory_size, c = o.context_size;
    // Concatenated column i*2c + r*c + j holds interleaved column (i*c + j)*2 + r.
    std::vector<int64_t> source;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t j = 0; j < c; ++j) source.push_back((i * c + j) * 2 + r);
    {
      torch::NoGradGuard no_grad;
      concatenated.mix->weight.copy_(interleaved.mix->weight.index_select(1, torch::tensor(source)));
    }
    const auto s0 = random_state(batch, o);
    CHECK(max_abs_diff(interleaved.forward(x, s0, starts).y, concatenated.forward(x, s0, starts).y) < 1e-5);
  }

  SECTION("conjugate frequency gives the conjugate state") {
    auto o = small_options();
    torch::manual_seed(4);
    Ffm code(5, o);
    o.conjugate_frequency = true;
    torch::manual_seed(4);
    Ffm paper(5, o);
    auto zero = code.initial_state(batch, torch::kCPU);
    auto s_code = code.forward(x, zero, starts).state.tensors[0];
    auto s_paper = paper.forward(x, zero, starts).state.tensors[0];
    CHECK(max_abs_diff(s_code, torch::conj(s_paper)) < 1e-5);
    CHECK(max_abs_diff(s_code, s_paper) > 1e-3);
  }

  SECTION("paper init follows eq. 31 and 33") {
    FfmOptions o;
    o.init = rlm::memory::FfmInit::kPaper;
    Ffm ffm(8, o);
    CHECK(ffm.b[0].item<double>() == Approx(6.283185307 / 768.25).epsilon(1e-5));
    CHECK(ffm.b[1].item<double>() == Approx(6.283185307 / 512.5).epsilon(1e-5));
    CHECK(ffm.b[2].item<double>() == Approx(6.283185307 / 256.75).epsilon(1e-5));
    CHECK(ffm.b[3].item<double>() == Approx(6.283185307).epsilon(1e-5));
    CHECK(ffm.a[31].item<double>() == Approx(std::log(0.01) / 1024).epsilon(1e-5));
    CHECK(ffm.a[0].item<double>() ==
          Approx(-(std::log(100.0) / 1024 / 32 + 31.0 / 32 * (std::log(DBL_MAX) / 1024 - 0.01))).epsilon(1e-5));
  }

  SECTION("informed init with the default periods equals the code init") {
    FfmOptions o;
    Ffm code(8, o);
    o.init = rlm::memory::FfmInit::kPeriods;
    Ffm periods(8, o);
    CHECK(max_abs_diff(code.a, periods.a) < 1e-7);
    o.min_period = 32;
    o.max_period = 104;
    Ffm informed(8, o);
    CHECK(informed.a[0].item<double>() == Approx(std::log(0.01) / 32).epsilon(1e-5));
    CHECK(informed.a[31].item<double>() == Approx(std::log(0.01) / 104).epsilon(1e-5));
    CHECK(informed.b[0].item<double>() == Approx(6.283185307 / 32).epsilon(1e-5));
  }

  SECTION("clamp write-back keeps a inside its range, and both clamps give the same outputs") {
    auto o = small_options();
    torch::manual_seed(5);
    Ffm functional(5, o);
    o.clamp_writeback = true;
    torch::manual_seed(5);
    Ffm writeback(5, o);
    {
      torch::NoGradGuard no_grad;
      for (auto* f : {&functional, &writeback}) {
        f->a[0] = -3.0;
        f->a[1] = 0.5;
      }
    }
    const auto s0 = random_state(batch, o);
    auto y_functional = functional.forward(x, s0, starts).y;
    auto y_writeback = writeback.forward(x, s0, starts).y;
    CHECK(max_abs_diff(y_functional, y_writeback) < 1e-6);
    CHECK(functional.a[0].item<double>() == -3.0);
    CHECK(writeback.a[0].item<double>() == Approx(-writeback.limit()));
    CHECK(writeback.a[1].item<double>() == Approx(-1e-8).margin(1e-12));
    CHECK(writeback.a.max().item<double>() <= -1e-8 + 1e-15);
  }

  SECTION("Hadamard decay, ablations and frozen decays") {
    auto o = small_options();
    o.decay_shape = rlm::memory::FfmDecayShape::kHadamard;
    o.input_gate = false;
    o.output_gate = false;
    o.learn_decay = false;
    Ffm ffm(5, o);
    CHECK(ffm.a.sizes() == torch::IntArrayRef({6, 3}));
    CHECK(ffm.b.sizes() == torch::IntArrayRef({6, 3}));
    auto out = ffm.forward(x, ffm.initial_state(batch, torch::kCPU), starts);
    CHECK(out.y.sizes() == torch::IntArrayRef({steps, batch, 10}));
    out.y.sum().backward();
    CHECK_FALSE(ffm.a.grad().defined());
    REQUIRE(ffm.b.grad().defined());
    CHECK(ffm.b.grad().abs().sum().item<double>() > 0.0);

    FfmOptions still = small_options();
    still.oscillate = false;
    still.decay = false;
    Ffm flat(5, still);
    CHECK(flat.b.eq(1e-6f).all().item<bool>());
    CHECK(flat.a.eq(0.0f).all().item<bool>());
    // Without decay or oscillation the state is the running sum of x̃ (γ = exp(−1e-8 + 1e-6 i) ≈ 1).
    auto gamma = flat.decay_gate();
    CHECK(max_abs_diff(gamma, torch::ones_like(gamma)) < 1e-5);
  }
}

// The ablation flags of the FFM paper's Table 3 and the clamp write-back are YAML keys: each one, set
// in a config, reaches the Ffm the registry builds and changes what it computes, not just a field.
TEST_CASE("ffm: ablation flags reach the module from a YAML config", "[memory][ffm][registry]") {
  const int64_t steps = 6, batch = 2, input = 5;
  torch::manual_seed(21);
  const auto x = torch::randn({steps, batch, input});
  const auto starts = torch::zeros({steps, batch}, torch::kBool);

  // Same seed, same sizes: the Linear weights are drawn identically, so any output difference comes from the flag.
  auto build = [&](const std::string& flag_line) {
    const std::string yaml =
        "model:\n  memory:\n    type: ffm\n    hidden_size: 10\n    ffm:\n      memory_size: 6\n"
        "      context_size: 3\n" +
        (flag_line.empty() ? std::string() : "      " + flag_line + "\n");
    const auto config = rlm::parse_config(yaml, "inline.yaml");
    torch::manual_seed(7);
    auto memory = std::dynamic_pointer_cast<Ffm>(rlm::memory::make_memory(config.model.memory, input));
    REQUIRE(memory);
    return memory;
  };
  auto output = [&](Ffm& ffm) { return ffm.forward(x, ffm.initial_state(batch, torch::kCPU), starts).y; };

  auto reference = build("");
  const FfmOptions defaults;
  CHECK(reference->options().input_gate == defaults.input_gate);
  CHECK(reference->options().output_gate == defaults.output_gate);
  CHECK(reference->options().oscillate == defaults.oscillate);
  CHECK(reference->options().learn_oscillate == defaults.learn_oscillate);
  CHECK(reference->options().decay == defaults.decay);
  CHECK(reference->options().learn_decay == defaults.learn_decay);
  CHECK(reference->options().clamp_writeback == defaults.clamp_writeback);
  const auto y_reference = output(*reference);

  SECTION("input_gate: false (FFM-NI) stores v ungated") {
    auto ffm = build("input_gate: false");
    CHECK_FALSE(ffm->options().input_gate);
    CHECK(max_abs_diff(output(*ffm), y_reference) > 1e-3);
  }
  SECTION("output_gate: false (FFM-NO) gives LN(z) + thru") {
    auto ffm = build("output_gate: false");
    CHECK_FALSE(ffm->options().output_gate);
    CHECK(max_abs_diff(output(*ffm), y_reference) > 1e-3);
  }
  SECTION("oscillate: false (FFM-NC) fills b with 1e-6 and freezes it") {
    auto ffm = build("oscillate: false");
    CHECK_FALSE(ffm->options().oscillate);
    CHECK(ffm->b.eq(1e-6f).all().item<bool>());
    auto y = output(*ffm);
    CHECK(max_abs_diff(y, y_reference) > 1e-3);
    y.sum().backward();
    CHECK_FALSE(ffm->b.grad().defined());
  }
  SECTION("decay: false (FFM-ND) fills a with 0 and freezes it") {
    auto ffm = build("decay: false");
    CHECK_FALSE(ffm->options().decay);
    CHECK(ffm->a.eq(0.0f).all().item<bool>());
    auto y = output(*ffm);
    CHECK(max_abs_diff(y, y_reference) > 1e-3);
    y.sum().backward();
    CHECK_FALSE(ffm->a.grad().defined());
  }
  SECTION("learn_oscillate: false (FFM-FC) and learn_decay: false (FFM-FD) keep the init but stop its gradient") {
    auto fixed_context = build("learn_oscillate: false");
    CHECK_FALSE(fixed_context->options().learn_oscillate);
    auto y = output(*fixed_context);
    CHECK(max_abs_diff(y, y_reference) < 1e-6);
    y.sum().backward();
    CHECK_FALSE(fixed_context->b.grad().defined());
    REQUIRE(fixed_context->a.grad().defined());

    auto fixed_decay = build("learn_decay: false");
    CHECK_FALSE(fixed_decay->options().learn_decay);
    auto y2 = output(*fixed_decay);
    CHECK(max_abs_diff(y2, y_reference) < 1e-6);
    y2.sum().backward();
    CHECK_FALSE(fixed_decay->a.grad().defined());
    REQUIRE(fixed_decay->b.grad().defined());
  }
  SECTION("clamp_writeback: true writes the clamp into a") {
    auto ffm = build("clamp_writeback: true");
    CHECK(ffm->options().clamp_writeback);
    {
      torch::NoGradGuard no_grad;
      ffm->a[0] = 0.5;
      reference->a[0] = 0.5;
    }
    output(*ffm);
    output(*reference);
    CHECK(ffm->a[0].item<double>() == Approx(-1e-8).margin(1e-12));
    CHECK(reference->a[0].item<double>() == 0.5);
  }
}

// Recall the first token: 24 random one-hot tokens, predict the first one at the last step (chance 25%). The input
// also carries an episode-start flag, like POPGym's Antialias wrapper (is_t0): FFM's gates see only the current input,
// so without it the first token is only separable by a sharp temporal filter of the decays (about 77% after 1500
// iterations at 12 steps); with it the input gate learns to store the first token and the slow traces keep it.
TEST_CASE("ffm: learns to recall the first token on CPU", "[memory][ffm][learning][slow]") {
  torch::manual_seed(0);
  torch::set_num_threads(1);
  const int64_t tokens = 4, steps = 24, batch = 64, iterations = 400;
  FfmOptions o;
  o.memory_size = 16;
  o.context_size = 4;
  o.output_size = 32;
  auto ffm = std::make_shared<Ffm>(tokens + 1, o);
  torch::nn::Linear head(o.output_size, tokens);
  std::vector<torch::Tensor> params = ffm->parameters();
  for (const auto& p : head->parameters()) params.push_back(p);
  torch::optim::Adam optimizer(params, torch::optim::AdamOptions(3e-3));

  auto make_batch = [&](int64_t n) {
    auto ids = torch::randint(tokens, {steps, n}, torch::kLong);
    auto starts = torch::zeros({steps, n}, torch::kBool);
    starts[0].fill_(true);
    auto x =
        torch::cat({torch::one_hot(ids, tokens).to(torch::kFloat32), starts.to(torch::kFloat32).unsqueeze(-1)}, -1);
    return std::make_tuple(x, starts, ids[0]);
  };
  auto logits_of = [&](const torch::Tensor& x, const torch::Tensor& starts) {
    auto out = ffm->forward(x, ffm->initial_state(x.size(1), torch::kCPU), starts);
    return head(out.y[steps - 1]);
  };

  const auto begin = std::chrono::steady_clock::now();
  for (int64_t it = 0; it < iterations; ++it) {
    auto [x, starts, target] = make_batch(batch);
    auto loss = torch::nn::functional::cross_entropy(logits_of(x, starts), target);
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
  }
  torch::NoGradGuard no_grad;
  auto [x, starts, target] = make_batch(2000);
  const double accuracy = logits_of(x, starts).argmax(-1).eq(target).to(torch::kFloat64).mean().item<double>();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  INFO("accuracy " << accuracy << " after " << iterations << " iterations in " << seconds << " s");
  CHECK(accuracy >= 0.95);
}
