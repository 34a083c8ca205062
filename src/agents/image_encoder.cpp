#include "agents/image_encoder.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "envs/vec_env.hpp"
#include "nn/linear.hpp"

namespace rlm::agents {
namespace {

/// Height and width after the convolutions (no padding, no dilation: floor((x − k) / s) + 1 per layer).
std::pair<int64_t, int64_t> conv_output(int64_t h, int64_t w, const CnnConfig& cnn) {
  for (size_t i = 0; i < cnn.channels.size(); ++i) {
    h = (h - cnn.kernel_sizes[i]) / cnn.strides[i] + 1;
    w = (w - cnn.kernel_sizes[i]) / cnn.strides[i] + 1;
  }
  return {h, w};
}

}  // namespace

int64_t ObservationLayout::image_size() const {
  int64_t n = has_image() ? 1 : 0;
  for (int64_t d : image_shape) n *= d;
  return n;
}

ObservationLayout observation_layout(const envs::VecEnv& envs, const ModelConfig& model, bool markovian_partial) {
  if (model.encoder != "cnn") return ObservationLayout(envs.obs_size());
  const envs::Space& base = envs.base_observation_space();
  if (!base.is_image()) {
    throw ConfigValueError("model.encoder",
                           fmt::format("model.encoder = cnn needs an image observation, but {} observes {} (use mlp)",
                                       envs.id(), base.to_string()));
  }
  if (!markovian_partial) {
    throw ConfigValueError("model.encoder",
                           "model.encoder = cnn reads the env's image, which env.markovian replaces "
                           "by the env's state (use env.markovian: partial or model.encoder: mlp)");
  }
  const CnnConfig& cnn = model.cnn;  // its lists have one entry per convolution (checked with the config)
  const auto [h, w] = conv_output(base.shape[1], base.shape[2], cnn);
  if (h < 1 || w < 1) {
    throw ConfigValueError("model.cnn.kernel_sizes",
                           fmt::format("model.cnn: kernels {} with strides {} do not fit {}'s {}x{} image",
                                       cnn.kernel_sizes, cnn.strides, envs.id(), base.shape[1], base.shape[2]));
  }
  return ObservationLayout(envs.obs_size(), base.shape, cnn);
}

ImageEncoderImpl::ImageEncoderImpl(const ObservationLayout& layout)
    : image_shape_(layout.image_shape),
      image_size_(layout.image_size()),
      rest_size_(layout.size - layout.image_size()),
      embedding_size_(layout.cnn.embedding_size),
      normalize_(layout.cnn.normalize_pixels) {
  if (!layout.has_image() || image_shape_.size() != 3 || rest_size_ < 0)
    throw std::invalid_argument("ImageEncoder needs a layout with a C, H, W image inside its size");
  const CnnConfig& cnn = layout.cnn;
  convs_ = register_module("convs", torch::nn::Sequential());
  int64_t in = image_shape_[0];
  for (size_t i = 0; i < cnn.channels.size(); ++i) {
    convs_->push_back(
        torch::nn::Conv2d(torch::nn::Conv2dOptions(in, cnn.channels[i], cnn.kernel_sizes[i]).stride(cnn.strides[i])));
    convs_->push_back(torch::nn::ReLU());
    in = cnn.channels[i];
  }
  const auto [h, w] = conv_output(image_shape_[1], image_shape_[2], cnn);
  linear_ = register_module("linear", rlm::nn::Linear(in * h * w, embedding_size_));
}

torch::Tensor ImageEncoderImpl::forward(const torch::Tensor& obs) {
  auto lead = obs.sizes().vec();
  lead.pop_back();
  const auto flat = obs.reshape({-1, obs.size(-1)});
  auto image = flat.narrow(1, 0, image_size_).reshape({-1, image_shape_[0], image_shape_[1], image_shape_[2]});
  if (normalize_) image = image / 255.0;
  auto embedding = linear_->forward(convs_->forward(image).flatten(1));
  if (rest_size_ > 0) embedding = torch::cat({embedding, flat.narrow(1, image_size_, rest_size_)}, 1);
  lead.push_back(output_size());
  return embedding.reshape(lead);
}

}  // namespace rlm::agents
