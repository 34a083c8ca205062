// STM backend: the SAM-based two-memory cell of the SAM paper (§2.3, Eqs. 9–14) as the authors' code computes it
// (thaihungle/SAM@7fc2b18:baselines/sam/stm_basic.py, STM.compute; stm_rl.py is the Atari variant). Where the paper
// and the code disagree rlm follows the code (docs/models/stm.md lists each case): the M^i write is f1 x f1 (Eq. 9:
// f1 x f2), gates are sigmoids with scalar biases bI, bF (App. D prints none), the write is tanh'd,
// M^r_t = alpha1 M^r_{t-1} + SAM (Eq. 12: M^r_{t-1} + alpha1 SAM), the transfer reads the fresh SAM output (Eq. 13:
// M^r_t), the SAM projection mixes the columns of M^i (Eqs. 4–6: rows), one SAM iteration per step.
//
// Per step: the item memory M^i [d, d] takes a gated outer-product write of f1(x); the relational memory M^r [nq, d, d]
// is read with softmax(f3(x)) and f2(x); SAM (outer-product attention over LayerNorm'd projections of M^i) produces the
// new relational content R0, which is transferred back into M^i (G1) and added to alpha1 * M^r; the output is
// head(LN(G3(G2(M^r)))).
//
// The recurrence is non-linear, so forward runs a loop over T of batched ops; everything that depends only on x (the
// input projections, the gates' x-term, the read weights) is computed for all T at once, and the output stage after G2
// runs once over [T * B] after the loop. In float32, on the CPU and on a GPU, the gated M^i write and the relational
// write (attention, M^r update, next read) are fused autograd nodes (stm_item_write.hpp, stm_relational_write.hpp);
// in the tests' float64 reference torch's ops.
#pragma once
#include <optional>

#include "memory/memory.hpp"
#include "memory/stm_config.hpp"
#include "nn/linear.hpp"

namespace rlm::memory {

/// What the cell reads: the YAML options (StmConfig, memory/stm_config.hpp) plus the output width and the choices
/// that no config sets.
struct StmOptions : StmConfig {
  /// Initialisation of every Linear inside the cell.
  enum class Init {
    kGlorot,  ///< weights_init (baselines/sam/utils.py): W ~ U(+-sqrt(6 / (fan_in + fan_out))), b = 0 (a3c.py)
    kTorch,   ///< PyTorch's default W, b ~ U(+-1 / sqrt(fan_in)) (the supervised tasks)
  };

  int64_t out_att_size = 64;     ///< no: width of o_t = G3(...) (the code's out_att_size; the paper gives none)
  int64_t mlp_size = 128;        ///< hidden width of the code's 2-layer ReLU head on o_t; 0 = no head, y = LN(o)
  int64_t output_size = 256;     ///< width of y = head output (256 in a3c.py's agent)
  bool output_layernorm = true;  ///< LayerNorm(no) on o_t before the head, as stm_rl.py (layernorm2)
  Init init = Init::kGlorot;     ///< a3c.py re-initialises every Linear of the cell this way
  /// Learned initial memories M^i_0 ~ U(+-1/sqrt(2d)), M^r_0 ~ U(+-1/sqrt(2d+nq)) used at every reset (the code's
  /// learn_init_mem); false = zero initial memories.
  bool learn_init_state = true;
  /// Fixed values for alpha1, alpha2, alpha3 (the code's init_alphas); nullopt = learnable, initialised 0.
  std::optional<double> alpha1, alpha2, alpha3;
  /// Clamp alpha1 to [0, 1] in M^r_t = alpha1 * M^r_{t-1} + SAM so M^r cannot explode over long episodes
  /// (our option, docs/models/stm.md; the code's alpha1 is unconstrained).
  bool alpha1_clamp = false;
};

class Stm : public Memory {
 public:
  Stm(int64_t input_size, const StmOptions& options);
  int64_t output_size() const override { return output_width_; }
  /// {M^i [B, d, d]} and, when M^r is carried, {M^i, M^r [B, nq, d, d]}, indexed M^i[e, f] and M^r[s, a, c] as in
  /// docs/models/stm.md. G2's weight columns are M^r[s]'s (a, c) flattened.
  MemoryState initial_state(int64_t batch, const torch::Device& device) const override;
  MemoryOutput forward(const torch::Tensor& x, const MemoryState& state, const torch::Tensor& starts) override;

  const StmOptions& options() const { return options_; }

 private:
  torch::Tensor alpha(const torch::Tensor& param, const std::optional<double>& fixed, const torch::Tensor& like) const;

  StmOptions options_;
  int64_t output_width_;
  bool carries_relational_;  ///< carry_relational, unless alpha1 and alpha2 are both fixed at 0 (M^r_{t-1} unused)
  bool reads_relational_;    ///< carries M^r and alpha2 is not fixed at 0: the M^r read path exists

  rlm::nn::Linear f1_{nullptr}, f2_{nullptr}, f3_{nullptr};  // input projections (SAM paper Eqs. 9, 11)
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
