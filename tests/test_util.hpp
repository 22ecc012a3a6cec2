// Shared test helpers: fixture paths, a temporary folder per test, random tensors, relative L2 error.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "weights_tools/error.hpp"

namespace bs::test {

// The source tree: compiled in, or $BATCHSCOPE_SOURCE_DIR when the binaries run from another checkout
// (the GPU machine runs binaries built elsewhere).
inline std::string source_dir() {
  const char* s = std::getenv("BATCHSCOPE_SOURCE_DIR");
  return s && *s ? s : BATCHSCOPE_SOURCE_DIR;
}
inline std::string fixture(const std::string& name) { return source_dir() + "/tests/fixtures/" + name; }
inline std::string data_file(const std::string& name) { return source_dir() + "/data/" + name; }

// A fresh folder under the build tree, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("bs_test_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" +
             std::to_string(std::random_device{}()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}
inline void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// `f` must throw bs::Error whose message starts with `path` and contains `needle`.
inline void expect_error_at(const std::function<void()>& f, const std::string& path, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error for " << path;
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(path, 0), 0u) << "message should start with the path: " << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  }
}

// Rows of a CSV file (the header first), honouring quoted cells.
inline std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::string cell;
    bool quoted = false;
    for (char c : line) {
      if (c == '"') quoted = !quoted;
      else if (c == ',' && !quoted) { cells.push_back(cell); cell.clear(); }
      else cell += c;
    }
    cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

// The warm row of a sweep CSV (or, with `layer`, of its layers CSV) for one batch size, by column name; empty if none.
inline std::map<std::string, std::string> warm_row(const std::string& csv, int batch, const std::string& layer = "") {
  const auto rows = read_csv(csv);
  for (size_t r = 1; r < rows.size(); ++r) {
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < rows[0].size() && i < rows[r].size(); ++i) row[rows[0][i]] = rows[r][i];
    if (row["run"] == "warm" && row["batch"] == std::to_string(batch) && (layer.empty() || row["layer"] == layer)) return row;
  }
  return {};
}

// Fresh random values in [-1, 1) from a seed drawn per call (printed on failure by the caller).
inline std::vector<float> random_vector(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}
inline std::mt19937 fresh_rng(uint32_t* seed_out = nullptr) {
  uint32_t seed = std::random_device{}();
  if (seed_out) *seed_out = seed;
  return std::mt19937(seed);
}

// ||a - b|| / ||b||; NaN anywhere gives +inf so that it never passes a tolerance.
inline double rel_l2(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) return INFINITY;
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += double(b[i]) * b[i];
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

}  // namespace bs::test
