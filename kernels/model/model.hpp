// A network described as data: model.json (input shape, ordered layers, the .npy file and layout of each
// weight tensor) loaded into typed layers with their shapes inferred once. See README "model.json".
#pragma once
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

// Members that kernels call on the parameters they are given by value.
#ifdef __CUDACC__
#define BS_HOST_DEVICE __host__ __device__
#else
#define BS_HOST_DEVICE
#endif

namespace bs {

// Per-image activation shape. After flatten and fully connected layers h == w == 1.
struct Shape {
  int c = 0, h = 0, w = 0;
  int64_t size() const { return int64_t{c} * h * w; }
  bool operator==(const Shape&) const = default;
};
std::string to_string(const Shape& s);  // "(C, H, W)"

// Padding: ph rows above and pw columns left of the input; pb rows below and pr columns right, -1 meaning the same
// as above and left (symmetric, the common case). Kernels offset their windows by ph, pw alone; the bottom and
// right padding only sets the output size (and, for average pooling, the window a count including padding clips to).
struct Padding {
  int ph = 0, pw = 0, pb = -1, pr = -1;
  BS_HOST_DEVICE int pad_bottom() const { return pb < 0 ? ph : pb; }
  BS_HOST_DEVICE int pad_right() const { return pr < 0 ? pw : pr; }
  BS_HOST_DEVICE bool asymmetric() const { return pad_bottom() != ph || pad_right() != pw; }
  BS_HOST_DEVICE bool padded() const { return ph != 0 || pw != 0 || pad_bottom() != 0 || pad_right() != 0; }
};
struct ConvParams : Padding {
  int filters = 0, kh = 0, kw = 0, sh = 1, sw = 1, groups = 1;
  int dh = 1, dw = 1;  // dilation: the kernel's taps dh rows and dw columns apart (a (kh-1)*dh+1 tall window)
  bool dilated() const { return dh != 1 || dw != 1; }
  // The window's extent, taps dh rows and dw columns apart (64-bit: shape inference checks them against 2^24).
  int64_t window_h() const { return int64_t{kh - 1} * dh + 1; }
  int64_t window_w() const { return int64_t{kw - 1} * dw + 1; }
  std::vector<float> weight;  // (M, C/groups, KH, KW)
  std::vector<float> bias;    // (M,) or empty
};
enum class Act { relu, tanh, sigmoid, leaky_relu };
// leaky_relu: x for x >= 0, alpha * x below (ONNX LeakyRelu, PyTorch nn.LeakyReLU; alpha 0.01 by default). It runs as
// a layer of its own: no kernel fuses it into the convolution or fully connected layer before it.
struct ActParams {
  Act act = Act::relu;
  float alpha = 0.01f;
};
enum class PoolKind { max, avg };
// The input rows [y0, y1) and columns [x0, x1) of one pooling output, and what its average divides by.
struct PoolWindow {
  int y0, x0, y1, x1, count;
};
struct PoolParams : Padding {
  PoolKind kind = PoolKind::max;
  int kh = 0, kw = 0, sh = 1, sw = 1;
  bool ceil_mode = false;  // Caffe rounds the output size up, MXNet's "valid" convention down
  // Average: divide by the window clipped to the padded input (true: Caffe, MXNet, ONNX count_include_pad 1) or by the
  // input values inside it alone (false: PyTorch's default count_include_pad=False, ONNX's default 0).
  bool count_include_pad = true;
  // Output (oy, ox)'s window inside an ih x iw input. Max ignores the padding; average divides by the window clipped to
  // the padded input (count_include_pad: padding counts, beyond it does not, as Caffe) or by the input values inside it.
  // Every backend's pooling kernel takes it from here.
  BS_HOST_DEVICE PoolWindow window(int ih, int iw, int oy, int ox) const {
    PoolWindow w{oy * sh - ph, ox * sw - pw, 0, 0, 0};
    w.y1 = w.y0 + kh < ih + pad_bottom() ? w.y0 + kh : ih + pad_bottom();
    w.x1 = w.x0 + kw < iw + pad_right() ? w.x0 + kw : iw + pad_right();
    w.count = (w.y1 - w.y0) * (w.x1 - w.x0);
    w.y0 = w.y0 > 0 ? w.y0 : 0;
    w.x0 = w.x0 > 0 ? w.x0 : 0;
    w.y1 = w.y1 < ih ? w.y1 : ih;
    w.x1 = w.x1 < iw ? w.x1 : iw;
    if (!count_include_pad) w.count = (w.y1 - w.y0) * (w.x1 - w.x0);
    return w;
  }
};
// Across channels, Caffe's convention: b = a / (k + alpha/size * sum over `size` neighbours of a^2)^beta
struct LrnParams { int size = 5; float alpha = 1e-4f, beta = 0.75f, k = 1.0f; };
struct FlattenParams {};
struct FcParams {
  int outputs = 0;
  std::vector<float> weight;  // (outputs, inputs)
  std::vector<float> bias;    // (outputs,) or empty
};
struct SoftmaxParams {};

using LayerOp = std::variant<ConvParams, ActParams, PoolParams, LrnParams, FlattenParams, FcParams, SoftmaxParams>;

enum class LayerKind { conv, act, pool, lrn, flatten, fc, softmax };
const char* kind_name(LayerKind k);  // "conv", "act", ... (also the profile's kernel categories)

struct Layer {
  std::string name;
  LayerOp op;
  Shape in, out;
  LayerKind kind() const { return static_cast<LayerKind>(op.index()); }
  std::string type_name() const;   // the model.json "type"
  double flops_per_image() const;  // multiply-adds count 2
  int64_t weight_count() const;
};

// How photos become inputs (model.json "preprocess"; used by classify): BGR or RGB channel order, resize
// so the shorter side is resize_shorter, centre-crop to crop x crop, subtract the per-channel mean.
struct Preprocess {
  bool present = false;
  std::string channel_order = "BGR";
  int resize_shorter = 256, crop = 227;
  std::vector<float> mean = {104, 117, 123};  // in channel_order
};

struct Model {
  std::string name;
  Preprocess preprocess;
  std::string dir;            // folder holding model.json
  std::string weights_note;   // "real" or "synthetic: ..." (from model.json "weights")
  Shape input;
  std::vector<Layer> layers;

  Shape output() const { return layers.empty() ? input : layers.back().out; }
  // Layers to run for logits: all but a trailing softmax.
  size_t logits_layers() const;
  double flops_per_image() const;
};

// Loads DIR/model.json and its weights; every error names the file or layer and what disagrees.
Model load_model(const std::string& dir);
// Builds a model from a JSON text; weight files are resolved relative to `dir`.
Model parse_model(const std::string& json_text, const std::string& dir, const std::string& where);
// Runs shape inference over m.layers from m.input (called by the loaders; exposed for tests).
void infer_shapes(Model& m, const std::string& where);
// The outputs along one axis of a window of k at stride s over p_begin + in + p_end (0 when none fits); ceil_mode as
// pooling's: the size rounded up, the last window starting inside the input or its leading padding (Caffe, PyTorch).
int output_size(int in, int k, int s, int p_begin, int p_end, bool ceil_mode);
inline int output_size(int in, int k, int s, int p, bool ceil_mode) { return output_size(in, k, s, p, p, ceil_mode); }

}  // namespace bs
