// The image encoder (model.encoder: cnn; ImageEncoder in torchkit/networks.py of twni2016/pomdp-baselines@28cb5dd
// and twni2016/Memory-RL@c9b8b39):
//   pixels [..., C·H·W] -> [N, C, H, W] (/255 with normalize_pixels) -> (Conv2d + ReLU) per model.cnn.channels
//   -> flatten -> Linear(-> embedding_size), no activation after it (as the references).
// Observations reach the networks flat: the image's C·H·W values first (C-major, as the env writes them), then
// whatever the wrappers appended (previous action, is_t0). The encoder embeds the image and passes the rest through,
// so both PPO's feature map and the off-policy embedders see [embedding, rest].
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "agents/model_config.hpp"
#include "nn/linear.hpp"

namespace rlm::envs {
class VecEnv;
}

namespace rlm::agents {

/// What the networks read per step: `size` floats, of which the first C·H·W are an image of `image_shape` when the
/// model encodes images (model.encoder: cnn); `image_shape` is empty for a flat vector.
struct ObservationLayout {
  ObservationLayout(int64_t flat_size) : size(flat_size) {}  // NOLINT(runtime/explicit): a size is a flat layout
  ObservationLayout(int64_t total_size, std::vector<int64_t> shape, CnnConfig encoder)
      : size(total_size), image_shape(std::move(shape)), cnn(std::move(encoder)) {}

  int64_t size;
  std::vector<int64_t> image_shape;  ///< {C, H, W}, or empty
  CnnConfig cnn;                     ///< the encoder's shape, when image_shape is set

  bool has_image() const { return !image_shape.empty(); }
  int64_t image_size() const;  ///< C·H·W, 0 without an image
};

/// The layout a trainer's networks read from `envs` under `model`: flat for model.encoder mlp; for cnn, the env's
/// image in front. Throws ConfigValueError (model.encoder, model.cnn.*) when the env has no image observation, the
/// obs is replaced by the env's state (env.markovian), or the convolutions do not fit the image.
ObservationLayout observation_layout(const envs::VecEnv& envs, const ModelConfig& model, bool markovian_partial);

class ImageEncoderImpl : public torch::nn::Module {
 public:
  explicit ImageEncoderImpl(const ObservationLayout& layout);
  /// obs [..., layout.size] -> [..., output_size()]: the image's embedding, then the values after the image.
  torch::Tensor forward(const torch::Tensor& obs);
  int64_t output_size() const { return embedding_size_ + rest_size_; }

 private:
  std::vector<int64_t> image_shape_;
  int64_t image_size_, rest_size_, embedding_size_;
  bool normalize_;
  torch::nn::Sequential convs_{nullptr};
  rlm::nn::Linear linear_{nullptr};
};
TORCH_MODULE(ImageEncoder);

}  // namespace rlm::agents
