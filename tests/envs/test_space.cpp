// Spaces: sizes of the raw and one-hot layouts, membership, gymnasium-flatten encoding, names.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "envs/space.hpp"

using rlm::envs::Space;

TEST_CASE("space sizes for every kind", "[space]") {
  CHECK(Space::discrete(4).raw_size() == 1);
  CHECK(Space::discrete(4).encoded_size() == 4);
  CHECK(Space::multi_discrete({2, 3, 5}).raw_size() == 3);
  CHECK(Space::multi_discrete({2, 3, 5}).encoded_size() == 10);
  CHECK(Space::box({-1, -2}, {1, 2}).raw_size() == 2);
  CHECK(Space::box({-1, -2}, {1, 2}).encoded_size() == 2);
  const Space t = Space::tuple({Space::discrete(4), Space::box({0, 0, 0}, {1, 1, 1}), Space::multi_discrete({2, 2})});
  CHECK(t.raw_size() == 1 + 3 + 2);
  CHECK(t.encoded_size() == 4 + 3 + 4);
}

TEST_CASE("space contains checks integrality, ranges, bounds and size", "[space]") {
  const Space d = Space::discrete(4);
  CHECK(d.contains(std::vector<float>{0}));
  CHECK(d.contains(std::vector<float>{3}));
  CHECK_FALSE(d.contains(std::vector<float>{4}));
  CHECK_FALSE(d.contains(std::vector<float>{-1}));
  CHECK_FALSE(d.contains(std::vector<float>{1.5f}));
  CHECK_FALSE(d.contains(std::vector<float>{std::numeric_limits<float>::quiet_NaN()}));
  CHECK_FALSE(d.contains(std::vector<float>{0, 0}));

  const Space md = Space::multi_discrete({2, 3});
  CHECK(md.contains(std::vector<float>{1, 2}));
  CHECK_FALSE(md.contains(std::vector<float>{2, 0}));

  const Space b = Space::box({-1, 0}, {1, 2});
  CHECK(b.contains(std::vector<float>{-1, 2}));
  CHECK(b.contains(std::vector<float>{0.5f, 0.25f}));
  CHECK_FALSE(b.contains(std::vector<float>{1.0001f, 1}));
  CHECK_FALSE(b.contains(std::vector<float>{0, std::numeric_limits<float>::quiet_NaN()}));

  const Space t = Space::tuple({Space::discrete(2), Space::box({-1}, {1})});
  CHECK(t.contains(std::vector<float>{1, 0.5f}));
  CHECK_FALSE(t.contains(std::vector<float>{2, 0.5f}));
  CHECK_FALSE(t.contains(std::vector<float>{1, 1.5f}));
}

TEST_CASE("space encode is one-hot for discrete parts and concatenates tuple parts", "[space]") {
  const Space t = Space::tuple(
      {Space::discrete(4), Space::box({-5, -5}, {5, 5}), Space::multi_discrete({2, 3}), Space::discrete(2)});
  const std::vector<float> raw = {2, -1.5f, 4.25f, 1, 0, 1};
  std::vector<float> out(static_cast<size_t>(t.encoded_size()), 7.0f);  // stale values must be overwritten
  t.encode(raw, out);
  const std::vector<float> want = {0, 0, 1, 0, -1.5f, 4.25f, 0, 1, 1, 0, 0, 0, 1};
  CHECK(out == want);

  std::vector<float> small(3);
  CHECK_THROWS_AS(t.encode(raw, small), rlm::EnvError);
  std::vector<float> bad = raw;
  bad[0] = 4;  // out of range: must not write past its one-hot block
  CHECK_THROWS_AS(t.encode(bad, out), rlm::EnvError);
}

TEST_CASE("space encoded_space bounds one-hot blocks by 0 and 1", "[space]") {
  const Space t = Space::tuple({Space::discrete(2), Space::box({-3}, {4})});
  const Space e = t.encoded_space();
  CHECK(e.kind == Space::Kind::Box);
  CHECK(e.low == std::vector<float>{0, 0, -3});
  CHECK(e.high == std::vector<float>{1, 1, 4});
}

TEST_CASE("space to_string", "[space]") {
  CHECK(Space::discrete(4).to_string() == "Discrete(4)");
  CHECK(Space::multi_discrete({2, 3}).to_string() == "MultiDiscrete([2, 3])");
  CHECK(Space::box({0, 0}, {1, 1}).to_string() == "Box(2)");
  CHECK(Space::tuple({Space::discrete(4), Space::discrete(2)}).to_string() == "Tuple(Discrete(4), Discrete(2))");
}

TEST_CASE("space image is a uint8 CHW box of pixel values", "[space]") {
  const Space img = Space::image(3, 5, 5);
  CHECK(img.kind == Space::Kind::Box);
  CHECK(img.is_image());
  CHECK(img.shape == std::vector<int64_t>{3, 5, 5});
  CHECK(img.raw_size() == 75);
  CHECK(img.encoded_size() == 75);
  CHECK(img.to_string() == "Box(3, 5, 5; uint8)");
  std::vector<float> pixels(75, 204.0f);
  CHECK(img.contains(pixels));
  pixels[7] = 255.5f;  // out of range
  CHECK_FALSE(img.contains(pixels));
  pixels[7] = 12.5f;  // not an integer
  CHECK_FALSE(img.contains(pixels));
  CHECK_FALSE(Space::box({0, 0}, {1, 1}).is_image());
  CHECK(Space::box({0, 0}, {1, 1}).shape == std::vector<int64_t>{2});
  CHECK_THROWS_AS(Space::image(0, 5, 5), rlm::EnvError);
}

TEST_CASE("space encoded_space of an image with one-hot parts holds bytes", "[space]") {
  const Space with_action = Space::tuple({Space::image(3, 5, 5), Space::discrete(4), Space::discrete(2)});
  const Space e = with_action.encoded_space();
  CHECK(e.raw_size() == 75 + 4 + 2);
  CHECK(e.dtype == Space::DType::UInt8);
  CHECK_FALSE(e.is_image());  // flat: the CNN takes the image back from the leading 75 values
  // A float Box part, or no image at all, keeps float32.
  CHECK(Space::tuple({Space::image(3, 5, 5), Space::box({0}, {1})}).encoded_space().dtype == Space::DType::Float32);
  CHECK(Space::tuple({Space::discrete(4), Space::discrete(2)}).encoded_space().dtype == Space::DType::Float32);
}

TEST_CASE("space constructors reject empty or inverted ranges", "[space]") {
  CHECK_THROWS_AS(Space::discrete(0), rlm::EnvError);
  CHECK_THROWS_AS(Space::multi_discrete({2, 0}), rlm::EnvError);
  CHECK_THROWS_AS(Space::box({1}, {0}), rlm::EnvError);
  CHECK_THROWS_AS(Space::box({0, 0}, {1}), rlm::EnvError);
}
