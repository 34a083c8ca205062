// STM backend (docs/models/stm.md): one step equals the code's equations written out naively, stepping with T = 1
// equals sequence mode, resets equal a fresh (learned) initial state, gradients reach every parameter, the parameter
// count matches docs/models/stm.md, the fused steps (CPU passes and CUDA kernels) agree with torch's ops, and the cell
// learns a small recall task.
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <string>

#include "memory/stm.hpp"
#include "memory/stm_cuda_kernels.hpp"

using rlm::memory::MemoryState;
using rlm::memory::Stm;
using rlm::memory::StmOptions;

namespace {

StmOptions small_options() {
  StmOptions o;
  o.item_size = 6;
  o.num_slots = 3;
  o.rel_size = 5;
  o.out_att_size = 7;
  o.mlp_size = 9;
  o.output_size = 4;
  return o;
}

// The variants the stepping/reset/gradient tests run over: the default full model, the Atari code's variant, and
// the paper-side options.
std::vector<std::pair<std::string, StmOptions>> variants() {
  std::vector<std::pair<std::string, StmOptions>> out;
  out.emplace_back("full model, LN (a)", small_options());
  auto atari = small_options();
  atari.carry_relational = false;
  atari.qkv_norm = StmOptions::QkvNorm::kRow;
  out.emplace_back("Atari code, LN (b)", atari);
  auto paper = small_options();
  paper.qkv_norm = StmOptions::QkvNorm::kVector;
  paper.gated = false;
  paper.learn_init_state = false;
  paper.alpha1_clamp = true;
  paper.init = StmOptions::Init::kTorch;
  paper.mlp_size = 0;
  out.emplace_back("LN (c), ungated, zero init, clamped alpha1, no head", paper);
  auto rar = small_options();  // the code's RAR alphas (tasks/rar.json): alpha1 = alpha2 = 0, so M^r is not carried
  rar.alpha1 = 0.0;
  rar.alpha2 = 0.0;
  out.emplace_back("fixed alphas 0, 0, learnable", rar);
  auto babi = small_options();  // the code's bAbI alphas: alpha1 = 1, alpha3 = 0 (no transfer)
  babi.alpha1 = 1.0;
  babi.alpha3 = 0.0;
  out.emplace_back("fixed alphas 1, learnable, 0", babi);
  return out;
}

std::map<std::string, torch::Tensor> params_of(Stm& stm) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& item : stm.named_parameters()) out[item.key()] = item.value();
  return out;
}

// alpha = 0 at initialisation switches the read, the transfer and the M^r accumulation off; the tests switch them
// on so that every path is exercised.
void switch_on_alphas(Stm& stm) {
  torch::NoGradGuard no_grad;
  auto p = params_of(stm);
  if (p.count("alpha1")) p["alpha1"].fill_(0.6);
  if (p.count("alpha2")) p["alpha2"].fill_(0.8);
  if (p.count("alpha3")) p["alpha3"].fill_(0.4);
}

MemoryState random_state(const Stm& stm, int64_t batch) {
  MemoryState s = stm.initial_state(batch, torch::kCPU);
  for (auto& t : s.tensors) t = torch::randn_like(t) * 0.3;
  return s;
}

// The fused nodes (float32, on `device`) against torch's ops in double on the CPU: the same model in both, outputs,
// final states and every parameter's gradient agree to float rounding.
void check_fused_equals_reference(const StmOptions& options, const torch::Device& device) {
  torch::manual_seed(6);
  Stm fused(5, options);
  torch::manual_seed(6);
  Stm reference(5, options);
  switch_on_alphas(fused);
  switch_on_alphas(reference);
  reference.to(torch::kDouble);
  fused.to(device);
  const int64_t steps = 7, batch = 3;
  auto x = torch::randn({steps, batch, 5}, torch::kDouble);
  auto starts = torch::zeros({steps, batch}, torch::kBool);
  starts[4][1] = true;
  MemoryState s0 = random_state(reference, batch), s0_float;
  for (const auto& t : s0.tensors) s0_float.tensors.push_back(t.to(device, torch::kFloat));
  auto ref = reference.forward(x, s0, starts);
  auto out = fused.forward(x.to(device, torch::kFloat), s0_float, starts.to(device));
  // A loss with random weights on the outputs and the final states, so that every gradient path is taken.
  auto loss = [&](const rlm::memory::MemoryOutput& o) {
    torch::manual_seed(7);
    auto total = (o.y.cpu().to(torch::kDouble) * torch::randn(o.y.sizes(), torch::kDouble)).sum();
    for (const auto& t : o.state.tensors)
      total = total + (t.cpu().to(torch::kDouble) * torch::randn(t.sizes(), torch::kDouble)).sum();
    return total;
  };
  loss(ref).backward();
  loss(out).backward();
  // Within float rounding of each tensor's scale: with alpha1 = 0.6 the recurrence amplifies float32's rounding to
  // ~1e-4 of the largest gradient, as much with torch's float ops as with the fused node; a wrong term is O(1).
  auto close = [](const torch::Tensor& got, const torch::Tensor& expected, double tolerance) {
    const double scale = 1.0 + expected.abs().max().item<double>();
    return (got.cpu().to(torch::kDouble) - expected).abs().max().item<double>() <= tolerance * scale;
  };
  CHECK(close(out.y, ref.y, 1e-5));
  for (size_t i = 0; i < ref.state.tensors.size(); ++i) CHECK(close(out.state.tensors[i], ref.state.tensors[i], 2e-5));
  auto ref_params = params_of(reference);
  for (const auto& [key, param] : params_of(fused)) {
    INFO(key);
    REQUIRE(param.grad().defined());
    CHECK(close(param.grad(), ref_params.at(key).grad(), 1e-3));
  }
}

}  // namespace

TEST_CASE("stm: one step equals the SAM paper's equations written out naively", "[memory][stm]") {
  torch::manual_seed(3);
  auto o = small_options();
  Stm stm(5, o);
  switch_on_alphas(stm);
  auto p = params_of(stm);
  const int64_t batch = 2, d = o.item_size, nq = o.num_slots, nr = o.rel_size;
  auto x = torch::randn({batch, 5});
  auto state = random_state(stm, batch);
  auto mi = state.tensors[0];
  auto mr = state.tensors[1];  // M^r[s, a, c]

  auto lin = [&](const std::string& name, const torch::Tensor& in) {
    return torch::matmul(in, p[name + ".weight"].t()) + p[name + ".bias"];
  };
  // stm_basic.py STM.compute (thaihungle/SAM@7fc2b18), line by line.
  auto a = lin("f1", x), b = lin("f2", x), c = lin("f3", x);
  auto big_x = torch::einsum("bi,bj->bij", {a, a});
  auto g = lin("gate_mem", torch::tanh(mi)) + lin("gate_in", a).unsqueeze(1);
  auto in_gate = torch::sigmoid(g.narrow(2, 0, d) + p["input_bias"]);
  auto forget_gate = torch::sigmoid(g.narrow(2, d, d) + p["forget_bias"]);
  auto probs = torch::softmax(c, -1);
  auto vr = torch::einsum("bs,be,bsef->bf", {probs, b, mr});
  auto x2 = torch::einsum("be,bf->bef", {vr, b});
  mi = in_gate * torch::tanh(big_x) + forget_gate * mi;
  auto s = mi + p["alpha2"] * x2;
  auto qkv = torch::layer_norm(lin("qkv", s), {d, 3 * nq}, p["qkv_ln.weight"], p["qkv_ln.bias"]).permute({0, 2, 1});
  auto q = qkv.narrow(1, 0, nq), k = qkv.narrow(1, nq, nq), v = qkv.narrow(1, 2 * nq, nq);
  // The naive 5-D outer-product attention of the official code (stm_basic.py op_att).
  auto r0 = (torch::tanh(q.unsqueeze(2).unsqueeze(4) * k.unsqueeze(1).unsqueeze(4)) * v.unsqueeze(1).unsqueeze(3))
                .sum(2);  // [B, nq, d, d]
  auto r2 = lin("g1", r0.reshape({batch, nq * d, d}).transpose(1, 2));
  mi = mi + p["alpha3"] * r2;
  mr = p["alpha1"] * mr + r0;
  auto h = lin("g2", mr.reshape({batch, nq, d * d}));
  auto out =
      torch::layer_norm(lin("g3", h.reshape({batch, nq * nr})), {o.out_att_size}, p["out_ln.weight"], p["out_ln.bias"]);
  auto y = lin("head_out", torch::relu(lin("head2", torch::relu(lin("head1", out)))));

  auto result = stm.forward(x.unsqueeze(0), state, torch::zeros({1, batch}, torch::kBool));
  CHECK(torch::allclose(result.y[0], y, 1e-5, 1e-5));
  CHECK(torch::allclose(result.state.tensors[0], mi, 1e-5, 1e-5));
  CHECK(torch::allclose(result.state.tensors[1], mr, 1e-5, 1e-5));
}

TEST_CASE("stm: stepping one step at a time equals one call over the sequence", "[memory][stm]") {
  for (const auto& [name, options] : variants()) {
    INFO(name);
    torch::manual_seed(1);
    Stm stm(5, options);
    switch_on_alphas(stm);
    // In double precision: in float the batched input matmul over T * B rows rounds differently from B rows, and
    // the recurrence (alpha1 * M^r + R0 grows M^r) amplifies that to ~1e-5, which would hide real discrepancies.
    stm.to(torch::kDouble);
    const int64_t steps = 10, batch = 3;
    auto x = torch::randn({steps, batch, 5}, torch::kDouble);
    auto starts = torch::zeros({steps, batch}, torch::kBool);
    starts[3][1] = true;  // batch entry 1 starts a new episode at t = 3
    starts[7][0] = true;
    starts[7][2] = true;
    const auto s0 = random_state(stm, batch);
    auto whole = stm.forward(x, s0, starts);

    MemoryState state = s0;
    std::vector<torch::Tensor> outs;
    for (int64_t t = 0; t < steps; ++t) {
      auto step = stm.forward(x.slice(0, t, t + 1), state, starts.slice(0, t, t + 1));
      outs.push_back(step.y);
      state = step.state;
    }
    auto stepped = torch::cat(outs, 0);
    REQUIRE(whole.y.sizes() == stepped.sizes());
    CHECK(whole.y.size(2) == stm.output_size());
    CHECK(torch::allclose(whole.y, stepped, 1e-10, 1e-10));
    REQUIRE(whole.state.tensors.size() == state.tensors.size());
    for (size_t i = 0; i < state.tensors.size(); ++i) {
      CHECK(torch::allclose(whole.state.tensors[i], state.tensors[i], 1e-10, 1e-10));
    }
  }
}

TEST_CASE("stm: a reset equals a fresh initial state, for the reset entries only", "[memory][stm]") {
  for (const auto& [name, options] : variants()) {
    INFO(name);
    torch::manual_seed(2);
    Stm stm(4, options);
    switch_on_alphas(stm);
    auto prefix = torch::randn({5, 2, 4});
    auto episode = torch::randn({6, 2, 4});
    auto all = torch::cat({prefix, episode}, 0);
    // Entry 0 starts a new episode at t = 5; entry 1 does not.
    auto starts = torch::zeros({11, 2}, torch::kBool);
    starts[5][0] = true;
    auto with_reset = stm.forward(all, random_state(stm, 2), starts);
    auto fresh = stm.forward(episode, stm.initial_state(2, torch::kCPU), torch::zeros({6, 2}, torch::kBool));
    CHECK(torch::allclose(with_reset.y.slice(0, 5).select(1, 0), fresh.y.select(1, 0), 1e-5, 1e-5));
    // Entry 1 has its own history, and without the reset entry 0's history changes the output (the test can fail).
    CHECK_FALSE(torch::allclose(with_reset.y.slice(0, 5).select(1, 1), fresh.y.select(1, 1), 1e-4, 1e-4));
    auto no_reset = stm.forward(all, random_state(stm, 2), torch::zeros({11, 2}, torch::kBool));
    CHECK_FALSE(torch::allclose(no_reset.y.slice(0, 5).select(1, 0), fresh.y.select(1, 0), 1e-4, 1e-4));
  }
}

TEST_CASE("stm: with every alpha 0 the output ignores the previous relational memory", "[memory][stm]") {
  // At initialisation (alphas 0) M^r_t = SAM(M^i_t).
  torch::manual_seed(4);
  Stm stm(5, small_options());
  auto x = torch::randn({3, 2, 5});
  auto starts = torch::zeros({3, 2}, torch::kBool);
  auto s = random_state(stm, 2);
  auto perturbed = s;
  perturbed.tensors[1] = s.tensors[1] + torch::randn_like(s.tensors[1]);
  CHECK(torch::equal(stm.forward(x, s, starts).y, stm.forward(x, perturbed, starts).y));
}

TEST_CASE("stm: gradients reach every parameter", "[memory][stm]") {
  for (const auto& [name, options] : variants()) {
    INFO(name);
    torch::manual_seed(5);
    Stm stm(5, options);
    switch_on_alphas(stm);
    auto x = torch::randn({6, 2, 5});
    auto starts = torch::zeros({6, 2}, torch::kBool);
    starts[0].fill_(true);  // as in training: every sequence starts from the (learned) initial state
    starts[4][1] = true;
    auto out = stm.forward(x, stm.initial_state(2, torch::kCPU), starts);
    out.y.sum().backward();
    for (const auto& item : stm.named_parameters()) {
      INFO(item.key());
      REQUIRE(item.value().grad().defined());
      CHECK(item.value().grad().abs().sum().item<double>() > 0.0);
    }
  }
}

TEST_CASE("stm: the CPU's fused relational write equals torch's ops, forward and gradients", "[memory][stm][simd]") {
  // In float32 on the CPU the step's attention and M^r update are one node (stm_relational_write.hpp), and the
  // gated M^i write another (stm_item_write.hpp); in double they are torch's ops. d = 21 adds rows of one 16-float
  // block plus a tail to the variants' d = 6.
  auto cases = variants();
  auto wide = small_options();
  wide.item_size = 21;
  cases.emplace_back("full model, d = 21", wide);
  for (const auto& [name, options] : cases) {
    INFO(name);
    check_fused_equals_reference(options, torch::kCPU);
  }
}

TEST_CASE("stm: the GPU's fused kernels equal torch's ops, forward and gradients", "[memory][stm][cuda]") {
  if (!torch::cuda::is_available()) {
    WARN("no CUDA device: skipped (runs in scripts/gpu_check.sh)");
    return;
  }
  // Besides the variants (d = 6: a lane of a warp has one column or none), d = 40 with 5 slots (two columns on some
  // lanes, 200 rows: not a multiple of the block's eight warps) and the paper's d = 96 with 8 slots.
  auto cases = variants();
  auto wide = small_options();
  wide.item_size = 40;
  wide.num_slots = 5;
  cases.emplace_back("full model, d = 40, 5 slots", wide);
  auto paper = small_options();
  paper.item_size = 96;
  paper.num_slots = 8;
  paper.rel_size = 96;
  cases.emplace_back("full model, d = 96, 8 slots", paper);
  for (const auto& [name, options] : cases) {
    INFO(name);
    REQUIRE(rlm::memory::stm_cuda_fusable(options.item_size, options.num_slots, 0));  // the kernels, not torch's ops
    check_fused_equals_reference(options, torch::kCUDA);
  }
}

TEST_CASE("stm: parameter count and state size of the paper's RL configuration", "[memory][stm]") {
  auto count = [](const Stm& stm) {
    int64_t n = 0;
    for (const auto& p : stm.parameters()) n += p.numel();
    return n;
  };
  StmOptions rl;  // defaults: d = 96, nq = 8, nr = 96, no = 64, head 128-128 -> 256, LN(o)
  rl.qkv_norm = StmOptions::QkvNorm::kRow;
  Stm with_row_ln(256, rl);
  CHECK(count(with_row_ln) == 1239829);  // docs/models/stm.md total (LN_qkv variant (b), 48 parameters)
  CHECK(with_row_ln.output_size() == 256);
  Stm with_matrix_ln(256, StmOptions{});
  CHECK(count(with_matrix_ln) == 1239829 - 48 + 4608);  // the default LN (a): 4,608 parameters
  rl.carry_relational = false;                          // no f2 (24,672), f3 (2,056), alpha1/2, M^r_0 (73,728)
  CHECK(count(Stm(256, rl)) == 1239829 - 24672 - 2056 - 2 - 73728);

  auto state = with_matrix_ln.initial_state(2, torch::kCPU);
  int64_t floats = 0;
  for (const auto& t : state.tensors) floats += t.numel();
  CHECK(floats == 2 * 82944);  // d² + nq·d² = 82,944 floats per env
}

TEST_CASE("stm: learns to recall the first token of a sequence", "[memory][stm][slow]") {
  // Sequences of 12 random one-hot tokens out of 8; at the last step the output must name the first token (chance
  // 1/8). The 11 later tokens are distractors that the memory must not let overwrite the first. With seed 7 the
  // accuracy leaves chance after ~100 iterations and is 100% by ~150 (other seeds: 75-150); the budget is 300.
  const auto start = std::chrono::steady_clock::now();
  torch::manual_seed(7);
  torch::set_num_threads(1);
  const int64_t vocab = 8, steps = 12, batch = 32;
  StmOptions o;
  o.item_size = 16;
  o.num_slots = 4;
  o.rel_size = 16;
  o.out_att_size = 32;
  o.mlp_size = 32;
  o.output_size = vocab;
  Stm stm(vocab, o);
  torch::optim::Adam optimizer(stm.parameters(), torch::optim::AdamOptions(3e-3));

  auto make_batch = [&](int64_t n) {
    auto tokens = torch::randint(vocab, {steps, n}, torch::kLong);
    return std::make_pair(torch::one_hot(tokens, vocab).to(torch::kFloat), tokens[0]);
  };
  auto last_output = [&](const torch::Tensor& x) {
    const int64_t n = x.size(1);
    auto starts = torch::zeros({steps, n}, torch::kBool);
    starts[0].fill_(true);
    return stm.forward(x, stm.initial_state(n, torch::kCPU), starts).y[steps - 1];
  };

  const int iterations = 300;
  for (int it = 0; it < iterations; ++it) {
    auto [x, target] = make_batch(batch);
    auto loss = torch::nn::functional::cross_entropy(last_output(x), target);
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
  }
  torch::NoGradGuard no_grad;
  auto [x, target] = make_batch(1000);
  const double accuracy = last_output(x).argmax(-1).eq(target).to(torch::kDouble).mean().item<double>();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO("recall-first-token accuracy " << accuracy << " after " << iterations << " iterations, " << seconds << " s");
  CHECK(accuracy >= 0.95);
}
