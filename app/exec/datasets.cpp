#include "app/exec/datasets.hpp"
#include "app/exec/install_paths.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "weights_tools/error.hpp"
#include "weights_tools/array.hpp"
#include "weights_tools/idx.hpp"
#include "weights_tools/limits.hpp"

namespace bs {

std::string data_dir() {
  if (const char* d = std::getenv("BATCHSCOPE_DATA"); d && *d) return d;
  if (const std::string share = installed_share_dir(); !share.empty()) return share + "/data";
  return BATCHSCOPE_DATA_DIR;
}

std::string resolve_model_dir(const std::string& arg) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (arg.empty()) usage_fail("--model", "needs a model folder, its model.json, or a shipped model's name");
  const fs::path p(arg);
  if (fs::is_directory(p, ec)) return arg;
  if (p.filename() == "model.json" && fs::is_regular_file(p, ec)) return p.parent_path().empty() ? "." : p.parent_path().string();
  std::string shipped;
  for (const auto& e : fs::directory_iterator(fs::path(data_dir()) / "models", ec))
    if (fs::is_regular_file(e.path() / "model.json", ec)) shipped += (shipped.empty() ? "" : ", ") + e.path().filename().string();
  if (arg.find('/') == std::string::npos && fs::is_regular_file(fs::path(data_dir()) / "models" / arg / "model.json", ec))
    return (fs::path(data_dir()) / "models" / arg).string();
  fail("--model", "'" + arg + "' is neither a model folder, a model.json, nor a shipped model (shipped: " +
                      (shipped.empty() ? "none found in " + data_dir() + "/models" : shipped) + ")");
}

Model load_model_arg(const std::string& arg) { return load_model(resolve_model_dir(arg)); }

void pick_shipped_dataset(const Shape& input, std::string& images, std::string& labels) {
  const std::string path = data_dir() + "/datasets.json";
  std::ifstream in(path);
  if (!in) fail(path, "cannot open (set BATCHSCOPE_DATA to the data folder, or pass --data and --labels)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    fail(path, std::string("invalid JSON (") + e.what() + ")");
  }
  std::string offered;
  for (const auto& d : j.at("datasets")) {
    Shape s{d.at("shape")[0].get<int>(), d.at("shape")[1].get<int>(), d.at("shape")[2].get<int>()};
    if (s == input) {
      images = data_dir() + "/" + d.at("images").get<std::string>();
      labels = data_dir() + "/" + d.at("labels").get<std::string>();
      return;
    }
    offered += (offered.empty() ? "" : ", ") + to_string(s);
  }
  fail("--data", "no shipped test set has the model's input shape " + to_string(input) + " (shipped: " + offered +
                     "); pass --data and --labels");
}

LabelledImages load_labelled(const std::string& images, const std::string& labels, int count,
                             const std::string& count_flag) {
  LabelledImages out;
  out.images_path = images;
  out.labels_path = labels;
  IdxFile im = read_idx(images);
  if (im.dims.size() != 3 && im.dims.size() != 4)
    fail(images, "expected images of shape (N, H, W) or (N, C, H, W), found " + std::to_string(im.dims.size()) + " dimensions");
  for (size_t i = 1; i < im.dims.size(); ++i)
    if (im.dims[i] < 1 || im.dims[i] > (1 << 24))
      fail(images, "image dimensions " + shape_str(im.dims) + " must each be 1 to 2^24");
  if (im.dims[0] > 0 && checked_elements(std::vector<int64_t>(im.dims.begin() + 1, im.dims.end()), images) > INT32_MAX)
    fail(images, "images of shape " + shape_str(im.dims) + " hold more than 2^31 - 1 values each");
  IdxFile lb = read_idx(labels);
  if (lb.dims.size() != 1) fail(labels, "expected labels of shape (N,), found " + std::to_string(lb.dims.size()) + " dimensions");
  const int64_t available = std::min<int64_t>({im.dims[0], lb.dims[0], INT32_MAX});
  if (count > available)
    fail(count_flag, std::to_string(count) + " images requested, " + images + " and its labels hold " +
                         std::to_string(available));
  out.count = count > 0 ? count : static_cast<int>(available);
  out.shape = im.dims.size() == 3 ? Shape{1, static_cast<int>(im.dims[1]), static_cast<int>(im.dims[2])}
                                  : Shape{static_cast<int>(im.dims[1]), static_cast<int>(im.dims[2]), static_cast<int>(im.dims[3])};
  im.values.resize(static_cast<size_t>(out.count) * out.shape.size());
  out.images = std::move(im.values);
  out.labels.assign(lb.values.begin(), lb.values.begin() + out.count);
  return out;
}

ImagePool make_image_pool(const Model& m, int min_count) {
  ImagePool in;
  try {
    std::string images, labels;
    pick_shipped_dataset(m.input, images, labels);
    LabelledImages set = load_labelled(images, labels, 0, "--images");
    in.images = std::move(set.images);
    in.labels = std::move(set.labels);
    in.count = set.count;
    in.source = images;
    return in;
  } catch (const Error&) {
  }
  in.count = std::max(min_count, 16);
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> u(0, 255);  // whole numbers, as 8-bit pixels are (--input-precision u8 carries them)
  in.images.resize(static_cast<size_t>(in.count) * m.input.size());
  for (float& x : in.images) x = static_cast<float>(u(rng));
  in.source = "synthetic 8-bit images (uniform whole numbers 0..255), seed 42";
  return in;
}

void fill_from_pool(const ImagePool& pool, const Model& m, int n, int offset, float* dst) {
  const int64_t sz = m.input.size();
  for (int i = 0; i < n; ++i)
    std::copy_n(pool.images.data() + ((offset + i) % pool.count) * sz, sz, dst + i * sz);
}

}  // namespace bs
