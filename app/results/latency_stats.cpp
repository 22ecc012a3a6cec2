#include "app/results/latency_stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace bs {

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double pos = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

double median_of(const std::vector<double>& v) { return percentile(v, 50.0); }

LatencySummary summarize_latencies(const std::vector<double>& v) {
  LatencySummary s;
  s.count = static_cast<int>(v.size());
  if (v.empty()) return s;
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  s.p50 = percentile(v, 50);
  s.p90 = percentile(v, 90);
  s.p99 = percentile(v, 99);
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  return s;
}

Agreement agreement(const float* out, const std::vector<float>& want, int k, int64_t f) {
  double num = 0, den = 0;
  bool nan = false;
  for (size_t i = 0; i < want.size(); ++i) {
    nan |= std::isnan(out[i]);
    num += (double(out[i]) - want[i]) * (double(out[i]) - want[i]);
    den += double(want[i]) * want[i];
  }
  Agreement a;
  a.rel_l2 = nan ? INFINITY : std::sqrt(num / std::max(den, 1e-30));
  for (int img = 0; img < k; ++img) {  // top-1 agreement: what a reduced precision changes for a user of the predictions
    const float* o = out + static_cast<size_t>(img) * f;
    const float* w = want.data() + static_cast<size_t>(img) * f;
    a.top1 += std::max_element(o, o + f) - o == std::max_element(w, w + f) - w;
  }
  return a;
}

}  // namespace bs
