// Summaries of repeated timings: median, percentiles (p50 p90 p99), min, max and mean, the way latency
// tools report them. Percentiles interpolate linearly between order statistics (numpy's default), so p50
// is the median and p100 the maximum; with fewer than 100 samples p99 lies between the two largest.
// And how far outputs are from a reference's (a sweep's check, tune's per-version error).
#pragma once
#include <chrono>
#include <cstdint>
#include <vector>

namespace bs {

double percentile(std::vector<double> v, double p);  // p in [0, 100]; 0 for an empty vector
double median_of(const std::vector<double>& v);

struct LatencySummary {
  int count = 0;
  double min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
};
LatencySummary summarize_latencies(const std::vector<double>& v);

// k outputs of f values each against the reference's (`want`, k x f): the relative L2 over all of them (infinite where
// an output holds a NaN), and on how many the top-1 class agrees.
struct Agreement {
  double rel_l2 = 0;
  int top1 = 0;
};
Agreement agreement(const float* out, const std::vector<float>& want, int k, int64_t f);

// Seconds from t to now on the steady clock.
inline double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace bs
