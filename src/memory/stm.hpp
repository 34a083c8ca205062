// STM backend: the SAM-based two-memory cell of Le, Tran and Venkatesh, "Self-attentive Associative Memory"
// (ICML 2020), written from the project's spec digest stm.md (section numbers below refer to it) and
// models_algos.md §3. Where paper [P] and official code [C] disagree the spec's recommendation is the default and
// the other behaviour an option where the spec asks for one. Fixed [C] choices (stm.md §8): the M^i write is
// f1 x f1 (D1), gates are sigmoids with scalar biases bI, bF (D2), the write is tanh'd (D3),
// M^r_t = alpha1 M^r_{t-1} + SAM (D4), the transfer reads the fresh SAM output (D5), the SAM projection mixes the
// columns of M^i (D6), one SAM iteration per step (D14).
//
// Per step (stm.md §3.2): the item memory M^i [d, d] takes a gated outer-product write of f1(x); the relational
// memory M^r [nq, d, d] is read with softmax(f3(x)) and f2(x); SAM (outer-product attention over LayerNorm'd
// projections of M^i) produces the new relational content R0, which is transferred back into M^i (G1) and added
// to alpha1 * M^r; the output is head(LN(G3(G2(M^r)))).
//
// The recurrence is non-linear (stm.md §5), so forward runs a loop over T of batched ops; everything that depends
// only on x (the input projections, the gates' x-term, the read weights) is computed for all T at once, and the
// output stage after G2 runs once over [T * B] after the loop. On the CPU in float32 the gated M^i write and the
// relational write (attention, M^r update, next read) are fused autograd nodes (stm_item_write_cpu.hpp,
// stm_relational_cpu.hpp); elsewhere, and in the tests' float64 reference, torch's ops.
#pragma once
#include <optional>

#include "memory/memory.hpp"
#include "memory/stm_config.hpp"
#include "nn/linear.hpp"

namespace rlm::memory {

/// What the cell reads: the YAML options (StmConfig, memory/stm_config.hpp) plus the output width and the spec's
/// choices that no config sets.
struct StmOptions : StmConfig {
  /// Initialisation of every Linear inside the cell (stm.md §3.4).
  enum class Init {
    kGlorot,  ///< A3C's weights_init: W ~ U(+-sqrt(6 / (fan_in + fan_out))), b = 0 (the paper's RL runs)
    kTorch,   ///< PyTorch's default W, b ~ U(+-1 / sqrt(fan_in)) (the supervised tasks)
  };

  int64_t out_att_size = 64;     ///< no: width of o_t = G3(...) (stm.md D9, models_algos.md §3 "out_att_size")
  int64_t mlp_size = 128;        ///< hidden width of the 2-layer ReLU head on o_t; 0 = no head, y = LN(o) (stm.md D9)
  int64_t output_size = 256;     ///< width of y = head output (stm.md D9; 256 in the paper's RL agent, §6)
  bool output_layernorm = true;  ///< LayerNorm(no) on o_t before the head, as in the RL code (stm.md §3.2, D9)
  Init init = Init::kGlorot;     ///< stm.md §3.4: the paper's RL runs re-initialised every Linear this way
  /// Learned initial memories M^i_0 ~ U(+-1/sqrt(2d)), M^r_0 ~ U(+-1/sqrt(2d+nq)) used at every reset (stm.md §3.4,
  /// D13, [REC]); false = zero initial memories.
  bool learn_init_state = true;
  /// Fixed values for alpha1, alpha2, alpha3 (code's init_alphas, stm.md §3.4); nullopt = learnable, initialised 0.
  std::optional<double> alpha1, alpha2, alpha3;
  /// Clamp alpha1 to [0, 1] in M^r_t = alpha1 * M^r_{t-1} + SAM so M^r cannot explode over long episodes
  /// (stm.md D4 option; the [C] default is the unconstrained alpha1).
  bool alpha1_clamp = false;
};

class Stm : public Memory {
 public:
  Stm(int64_t input_size, const StmOptions& options);
  int64_t output_size() const override { return output_width_; }
  /// {M^i [B, d, d]} and, when M^r is carried, {M^i, M^r [B, nq, d, d]}, indexed as the spec's M^i[e, f] and
  /// M^r[s, a, c] (stm.md §3.2). G2's weight columns are M^r[s]'s (a, c) flattened.
  MemoryState initial_state(int64_t batch, const torch::Device& device) const override;
  MemoryOutput forward(const torch::Tensor& x, const MemoryState& state, const torch::Tensor& starts) override;

  const StmOptions& options() const { return options_; }

 private:
  torch::Tensor alpha(const torch::Tensor& param, const std::optional<double>& fixed, const torch::Tensor& like) const;

  StmOptions options_;
  int64_t output_width_;
  bool carries_relational_;  ///< carry_relational, unless alpha1 and alpha2 are both fixed at 0 (M^r_{t-1} unused)
  bool reads_relational_;    ///< carries M^r and alpha2 is not fixed at 0: the M^r read path exists

  rlm::nn::Linear f1_{nullptr}, f2_{nullptr}, f3_{nullptr};  // input projections (stm.md §3.2)
  rlm::nn::Linear gate_in_{nullptr}, gate_mem_{nullptr};     // Wg_in, Wg_mem
  torch::Tensor input_bias_, forget_bias_;                   // bI = 0, bF = 1 (scalars)
  rlm::nn::Linear qkv_{nullptr};                             // Wqkv: d -> 3nq
  torch::nn::LayerNorm qkv_ln_{nullptr};                     // variants (a), (b)
  torch::Tensor qkv_ln_weight_, qkv_ln_bias_;                // variant (c): [3, 1, d]
  rlm::nn::Linear g1_{nullptr}, g2_{nullptr}, g3_{nullptr};  // transfer, distillation, output
  torch::nn::LayerNorm out_ln_{nullptr};
  rlm::nn::Linear head1_{nullptr}, head2_{nullptr}, head_out_{nullptr};
  torch::Tensor alpha1_, alpha2_, alpha3_;  // learnable scalars [1] (undefined when fixed or unused)
  torch::Tensor item0_, rel0_;              // learned initial memories (undefined when zeros or unused)
};

}  // namespace rlm::memory
