#include "golden_trace.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>

namespace rlm::test {
namespace {

std::filesystem::path data_dir(const std::string& folder) {
  const char* root = std::getenv("RLM_SOURCE_DIR");
  return std::filesystem::path(root ? root : ".") / "tests" / "data" / folder;
}

std::vector<char> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot open (set RLM_SOURCE_DIR to the repository root)");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  uint64_t z = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

const nlohmann::json& parameter_meta(const GoldenTrace& trace, const std::string& name) {
  for (const auto& p : trace.meta.at("parameters"))
    if (p.at("name") == name) return p;
  throw std::runtime_error(trace.name + ": no parameter '" + name + "' in its json");
}

double max_abs(const torch::Tensor& t) { return t.numel() ? t.abs().max().item<double>() : 0.0; }

}  // namespace

const torch::Tensor& GoldenTrace::at(const std::string& key) const {
  auto it = tensors.find(key);
  if (it == tensors.end()) throw std::runtime_error(name + ".pt has no tensor '" + key + "'");
  return it->second;
}

torch::Tensor GoldenTrace::parameter(const std::string& p) const {
  if (has("param/" + p)) return at("param/" + p);
  const auto& meta_p = parameter_meta(*this, p);
  const auto& fill = meta_p.at("fill");
  std::vector<int64_t> shape = meta_p.at("shape").get<std::vector<int64_t>>();
  auto values = golden_fill(fill.at("seed").get<uint64_t>(), shape, fill.at("bound").get<double>());
  // The recorder stores the first values it filled in: a mismatch means the fill formula drifted apart.
  const auto& head = at("fill_head/param/" + p);
  if (!torch::equal(values.flatten().narrow(0, 0, head.numel()), head))
    throw std::runtime_error(name + ": golden_fill does not reproduce the recorder's fill of '" + p + "'");
  return values;
}

GoldenTrace load_golden_trace(const std::string& name, const std::string& folder) {
  GoldenTrace trace;
  trace.name = name;
  const auto json_bytes = read_bytes(data_dir(folder) / (name + ".json"));
  trace.meta = nlohmann::json::parse(json_bytes.begin(), json_bytes.end());
  // torch.save's zip format, a flat dict of tensors (what LibTorch's pickle_load reads).
  const auto dict = torch::pickle_load(read_bytes(data_dir(folder) / (name + ".pt"))).toGenericDict();
  for (const auto& entry : dict) trace.tensors[entry.key().toStringRef()] = entry.value().toTensor();
  return trace;
}

torch::Tensor golden_fill(uint64_t seed, at::IntArrayRef shape, double bound) {
  auto out = torch::empty(shape, torch::kFloat32);
  float* data = out.data_ptr<float>();
  for (int64_t i = 0; i < out.numel(); ++i) {
    const double u = static_cast<double>(splitmix64(seed + static_cast<uint64_t>(i)) >> 40);
    data[i] = static_cast<float>(bound * (2.0 * u / 16777216.0 - 1.0));
  }
  return out;
}

torch::Tensor linked_view(const torch::Tensor& tensor, const ParameterLink& link, at::IntArrayRef their_shape) {
  torch::Tensor rows = link.rows < 0 ? tensor : tensor.narrow(0, link.row_begin, link.rows);
  return rows.view(their_shape);
}

void load_parameters(torch::nn::Module& module, const GoldenTrace& trace, const std::vector<ParameterLink>& links) {
  torch::NoGradGuard no_grad;
  auto ours = module.named_parameters();
  std::set<std::string> theirs_seen;
  std::map<std::string, int64_t> ours_rows;
  for (const auto& link : links) {
    INFO(trace.name << ": " << link.theirs << " -> " << link.ours);
    REQUIRE(ours.contains(link.ours));
    REQUIRE(theirs_seen.insert(link.theirs).second);
    const auto value = trace.parameter(link.theirs);
    auto view = linked_view(ours[link.ours], link, value.sizes());
    view.copy_(value);
    const auto& param = ours[link.ours];
    ours_rows[link.ours] += link.rows >= 0 ? link.rows : param.dim() ? param.size(0) : 1;
  }
  // A parameter the recorded path never reads (no gradient recorded) may have no counterpart in ours.
  for (const auto& p : trace.meta.at("parameters")) {
    if (p.value("grad_stored", "") == "none") continue;
    INFO(trace.name << ": the authors' parameter " << p.at("name").get<std::string>() << " has no link");
    CHECK(theirs_seen.count(p.at("name").get<std::string>()) == 1);
  }
  for (const auto& item : ours.items()) {
    INFO(trace.name << ": our parameter " << item.key() << " is not covered by the links");
    CHECK(ours_rows[item.key()] == (item.value().dim() ? item.value().size(0) : 1));
  }
}

namespace {

// A recorded sample of a big tensor: the values at `index` and the sum of squares of the whole.
void check_sample(const std::string& label, const torch::Tensor& index, const torch::Tensor& sample, double sumsq,
                  const torch::Tensor& ours, double tolerance) {
  const auto flat = ours.detach().to(torch::kCPU, torch::kFloat32).reshape({-1});
  const double scale = max_abs(sample), err = max_abs(flat.index_select(0, index) - sample);
  const double my_sumsq = flat.to(torch::kFloat64).square().sum().item<double>();
  INFO(label << " (a sample of " << index.numel() << "): max |ours - theirs| = " << err << ", max |theirs| = " << scale
             << ", sum of squares " << my_sumsq << " vs " << sumsq << ", tolerance " << tolerance);
  CHECK(err <= tolerance * scale);
  CHECK(std::abs(my_sumsq - sumsq) <= tolerance * sumsq);
}

}  // namespace

void check_recorded(const GoldenTrace& trace, const std::string& key, const torch::Tensor& ours, double tolerance) {
  if (!trace.has(key)) {
    return check_sample(trace.name + " " + key, trace.at("sample_index/" + key), trace.at("sample_value/" + key),
                        trace.at("sumsq/" + key).item<double>(), ours, tolerance);
  }
  const auto mine = ours.detach().to(torch::kCPU);
  const auto& ref = trace.at(key);
  REQUIRE(mine.sizes() == ref.sizes());
  const double scale = max_abs(ref), err = max_abs(mine.to(ref.scalar_type()) - ref);
  INFO(trace.name << " " << key << ": max |ours - theirs| = " << err << ", max |theirs| = " << scale << ", tolerance "
                  << tolerance << " of it");
  CHECK(err <= tolerance * scale);
}

void check_parameter_gradient(const GoldenTrace& trace, const std::string& name, const torch::Tensor& ours,
                              double tolerance) {
  if (trace.has("grad/param/" + name)) return check_recorded(trace, "grad/param/" + name, ours, tolerance);
  check_sample(trace.name + " gradient of " + name, trace.at("grad_index/param/" + name),
               trace.at("grad_sample/param/" + name), trace.at("grad_sumsq/param/" + name).item<double>(), ours,
               tolerance);
}

}  // namespace rlm::test
