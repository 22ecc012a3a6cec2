#include "app/commands/classify.hpp"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <numeric>

#include "app/exec/datasets.hpp"
#include "app/cli/flags.hpp"
#include "app/exec/executor.hpp"
#include "kernels/cpu/ref_ops.hpp"
#include "weights_tools/error.hpp"

#ifdef BATCHSCOPE_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace bs {

void ClassifyOptions::add_to(CLI::App& app) {
  cmd = &app;
  app.add_option("--model", model_dir, "model folder (an ImageNet model with a 'preprocess' section), its model.json, or a "
                                       "shipped model (alexnet)")->type_name("DIR");
  app.add_option("IMAGE", images, "JPEG or PNG photos");
  run.add_to(app, {BackendKind::cpu});
  app.add_option("--labels", labels, "class names, one per line (default: the shipped ImageNet names)")->type_name("FILE");
  add_int(app, "--top", top, "classes to print per image (default: 5)", 1, 1000000);
  app.footer("The AlexNet weights are not shipped: scripts/alexnet_weights.sh makes synthetic ones (or imports bvlc_alexnet.npy).\n"
             "Examples:\n  batchscope classify --model alexnet data/imagenet/images/cat.jpg\n"
             "  batchscope classify --model alexnet --backend cuda data/imagenet/images/*.jpg");
}

bool have_opencv() {
#ifdef BATCHSCOPE_HAVE_OPENCV
  return true;
#else
  return false;
#endif
}

std::vector<float> load_photo(const std::string& path, const Model& m) {
#ifdef BATCHSCOPE_HAVE_OPENCV
  const Preprocess& p = m.preprocess;
  if (m.input.c != 3 || m.input.h != p.crop || m.input.w != p.crop)
    fail(m.dir + "/model.json", "classify needs a 3-channel input of crop x crop (" + std::to_string(p.crop) + "), model takes " + to_string(m.input));
  std::ifstream probe(path);
  if (!probe) fail(path, "cannot open");
  cv::Mat img = cv::imread(path, cv::IMREAD_COLOR);  // BGR; grayscale is expanded to three channels
  if (img.empty()) fail(path, "not an image OpenCV can read (JPEG or PNG expected)");
  const double scale = static_cast<double>(p.resize_shorter) / std::min(img.rows, img.cols);
  cv::Mat resized;
  cv::resize(img, resized, cv::Size(std::max(p.crop, static_cast<int>(std::lround(img.cols * scale))),
                                    std::max(p.crop, static_cast<int>(std::lround(img.rows * scale)))),
             0, 0, cv::INTER_LINEAR);
  const int y0 = (resized.rows - p.crop) / 2, x0 = (resized.cols - p.crop) / 2;
  cv::Mat crop = resized(cv::Rect(x0, y0, p.crop, p.crop));
  std::vector<float> out(3 * static_cast<size_t>(p.crop) * p.crop);  // (C, H, W)
  for (int y = 0; y < p.crop; ++y)
    for (int x = 0; x < p.crop; ++x) {
      const cv::Vec3b bgr = crop.at<cv::Vec3b>(y, x);
      for (int c = 0; c < 3; ++c) {
        const int src = p.channel_order == "BGR" ? c : 2 - c;
        out[(static_cast<size_t>(c) * p.crop + y) * p.crop + x] = static_cast<float>(bgr[src]) - p.mean[c];
      }
    }
  return out;
#else
  (void)path;
  (void)m;
  fail("classify", "this build has no OpenCV (install libopencv-imgcodecs-dev and libopencv-imgproc-dev, then rebuild)");
#endif
}

int run_classify(const ClassifyOptions& o) {
  require(*o.cmd, "--model", "the ImageNet model folder, its model.json, or a shipped model (alexnet)");
  if (o.images.empty()) usage_fail("IMAGE", "name at least one JPEG or PNG photo to classify");
  const BackendKind kind = o.run.resolve_backend();
  o.run.validate(kind);
  if (o.run.input_precision == InputPrecision::u8)  // the photos reach the network with the channel means taken off
    usage_fail("--input-precision", "u8: classify subtracts the model's channel means on the host, so its input is not raw "
                                    "8-bit pixels; use fp32, fp16 or bf16");
  if (!have_opencv()) load_photo("", Model{});  // the clear error, before loading anything
  Model m = load_model_arg(o.model_dir);
  if (!m.preprocess.present) fail(o.model_dir + "/model.json", "has no 'preprocess' section, so photos cannot be prepared for it");
  const std::string labels_path = o.labels.empty() ? data_dir() + "/imagenet/synset_words.txt" : o.labels;
  std::ifstream lf(labels_path);
  if (!lf) fail(labels_path, "cannot open the class names");
  std::vector<std::string> names;
  for (std::string line; std::getline(lf, line);) names.push_back(line.size() > 10 && line[0] == 'n' ? line.substr(10) : line);
  const int64_t classes = m.layers[m.logits_layers() - 1].out.size();
  if (static_cast<int64_t>(names.size()) != classes)
    fail(labels_path, std::to_string(names.size()) + " class names for a model with " + std::to_string(classes) + " outputs");

  std::vector<float> batch;
  for (const std::string& img : o.images) {
    std::vector<float> x = load_photo(img, m);
    batch.insert(batch.end(), x.begin(), x.end());
  }
  const Executor ex(m, kind, o.run.options(kind));
  auto b = ex.open();
  const int n = static_cast<int>(o.images.size());
  std::vector<float> logits = ex.run_batches(*b, batch.data(), ex.convert(batch.data(), batch.size()), n, 0, m.logits_layers(), nullptr);
  std::vector<float> prob(logits.size());
  ref::softmax(logits.data(), n, classes, prob.data());
  const bool synthetic = m.weights_note.rfind("synthetic", 0) == 0;
  for (int i = 0; i < n; ++i) {
    std::cout << o.images[i] << " (" << m.name << ", " << b->name() << (synthetic ? ", SYNTHETIC weights: classes are meaningless" : "") << ")\n";
    const float* p = prob.data() + static_cast<size_t>(i) * classes;
    std::vector<int> idx(static_cast<size_t>(classes));
    std::iota(idx.begin(), idx.end(), 0);
    const int top = std::min<int>(o.top, static_cast<int>(classes));
    std::partial_sort(idx.begin(), idx.begin() + top, idx.end(), [&](int a, int c) { return p[a] > p[c]; });
    for (int k = 0; k < top; ++k) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "  %d. %6.4f  class %4d  ", k + 1, p[idx[k]], idx[k]);
      std::cout << buf << names[idx[k]] << "\n";
    }
  }
  return 0;
}

}  // namespace bs
