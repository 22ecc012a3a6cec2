// Weight layout rearrangements between frameworks. Each has its inverse; all are pure permutations.
#pragma once
#include <cstdint>
#include <vector>

namespace bs {

// (KH, KW, I, O) -> (O, I, KH, KW). For grouped convolutions I is the per-group input count and O spans all
// groups, so the same permutation is right group by group (TensorFlow/bvlc_alexnet.npy -> Caffe/PyTorch).
std::vector<float> hwio_to_oihw(const std::vector<float>& w, int kh, int kw, int i, int o);
std::vector<float> oihw_to_hwio(const std::vector<float>& w, int o, int i, int kh, int kw);

// (rows, cols) -> (cols, rows): fully connected (in, out) <-> (out, in).
std::vector<float> transpose2d(const std::vector<float>& w, int64_t rows, int64_t cols);

// Reorders the `in` axis of an (out, in) fully connected weight whose inputs were flattened in (H, W, C)
// order so that it takes inputs flattened in (C, H, W) order, and back.
std::vector<float> fc_inputs_hwc_to_chw(const std::vector<float>& w, int64_t out, int c, int h, int wd);
std::vector<float> fc_inputs_chw_to_hwc(const std::vector<float>& w, int64_t out, int c, int h, int wd);

}  // namespace bs
