// nn::KernelProfiler (nn/kernel_profile.hpp): on the CPU, torch's operators by self time, the calls counted exactly;
// on a GPU, the device kernels and how busy the device was.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "nn/kernel_profile.hpp"

namespace {

const rlm::nn::ProfileRow* find_row(const rlm::nn::KernelProfile& profile, const std::string& name) {
  for (const auto& row : profile.rows)
    if (row.name == name) return &row;
  return nullptr;
}

}  // namespace

TEST_CASE("kernel profile on the CPU: operators counted, by self time", "[memory][profile]") {
  auto a = torch::randn({256, 256}), b = torch::randn({256, 256});
  rlm::nn::KernelProfiler profiler(torch::kCPU);
  for (int i = 0; i < 3; ++i) torch::matmul(a, b);  // aten::matmul calls aten::mm, where the time goes
  for (int i = 0; i < 5; ++i) torch::sigmoid(a);
  const auto profile = profiler.stop();

  const auto* matmul = find_row(profile, "aten::matmul");
  const auto* mm = find_row(profile, "aten::mm");
  const auto* sigmoid = find_row(profile, "aten::sigmoid");
  REQUIRE(matmul != nullptr);
  REQUIRE(mm != nullptr);
  REQUIRE(sigmoid != nullptr);
  CHECK(matmul->calls == 3);
  CHECK(mm->calls == 3);
  CHECK(sigmoid->calls == 5);
  // Self time: the product's time is mm's alone, not matmul's too (inclusive times would make them about equal).
  CHECK(matmul->total_us < 0.5 * mm->total_us);
  double summed = 0;
  for (const auto& row : profile.rows) summed += row.total_us;
  CHECK(summed <= profile.wall_us * 1.01);
  CHECK(profile.busy_us == profile.wall_us);
  for (size_t i = 1; i < profile.rows.size(); ++i) CHECK(profile.rows[i - 1].total_us >= profile.rows[i].total_us);
  CHECK(profile.calls() >= 11);
}

TEST_CASE("kernel profile: kernel names shortened for a table", "[memory][profile]") {
  using rlm::nn::short_kernel_name;
  CHECK(short_kernel_name("void at::native::(anonymous namespace)::foo<float, 4>(int, at::Foo<2>)", 80) ==
        "at::native::(anonymous namespace)::foo");
  CHECK(short_kernel_name("void ampere_sgemm_128x64_tn", 80) == "ampere_sgemm_128x64_tn");
  CHECK(short_kernel_name("torch::autograd::CppNode<Node>", 80) == "torch::autograd::CppNode<Node>");
  CHECK(short_kernel_name("aten::addmm", 8) == "aten:...");
}

TEST_CASE("kernel profile on a GPU: the device kernels and how busy the device was", "[memory][profile][cuda]") {
  if (!torch::cuda::is_available()) {
    WARN("no CUDA device: skipped (runs in scripts/gpu_check.sh)");
    return;
  }
  auto a = torch::randn({512, 512}, torch::kCUDA);
  torch::mm(a, a);  // cuBLAS initialised outside the profile
  rlm::nn::KernelProfiler profiler(torch::kCUDA);
  for (int i = 0; i < 4; ++i) torch::mm(a, a);
  for (int i = 0; i < 6; ++i) torch::sigmoid(a);
  const auto profile = profiler.stop();
  CHECK(profile.calls() >= 10);
  CHECK(profile.busy_us > 0);
  CHECK(profile.busy_us <= profile.wall_us);
  bool sigmoid_kernel = false;
  for (const auto& row : profile.rows) sigmoid_kernel |= row.name.find("sigmoid") != std::string::npos;
  CHECK(sigmoid_kernel);
}
