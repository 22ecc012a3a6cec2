// .npz (NumPy-written, stored and deflated), IDX (gzipped or not) and MXNet .params reading, their
// round trips, and their malformed-file errors.
#include <gtest/gtest.h>
#include <zlib.h>

#include "test_util.hpp"
#include "weights_tools/error.hpp"
#include "weights_tools/idx.hpp"
#include "weights_tools/io.hpp"
#include "weights_tools/mxnet_params.hpp"
#include "weights_tools/npz.hpp"

using namespace bs;
using bs::test::fixture;

namespace {

using test::expect_error_at;

TEST(Npz, ReadsNumPyStoredAndDeflated) {
  for (const char* f : {"stored.npz", "deflated.npz"}) {
    std::vector<NamedArray> arrays = read_npz(fixture(f));
    ASSERT_EQ(arrays.size(), 2u) << f;
    std::map<std::string, Array> by;
    for (auto& a : arrays) by[a.name] = a.array;
    EXPECT_EQ(by["a"].shape, (std::vector<int64_t>{3, 4}));
    EXPECT_EQ(by["a"].to_float()[11], 5.5f);
    EXPECT_EQ(by["b"].dtype, DType::i64);
    EXPECT_EQ(by["b"].to_float(), (std::vector<float>{0, 1, 2, 3, 4}));
  }
}

TEST(Npz, WriteThenReadBothModes) {
  bs::test::TempDir tmp;
  std::vector<float> big(10000, 1.0f);  // compressible
  for (bool compress : {false, true}) {
    const std::string path = tmp / (compress ? "c.npz" : "s.npz");
    write_npz(path, {{"w", Array::from_float({100, 100}, big)}, {"v", Array::from_float({2}, {3, -4})}}, compress);
    std::vector<NamedArray> back = read_npz(path);
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(back[0].name, "w");
    EXPECT_EQ(back[0].array.to_float(), big);
    EXPECT_EQ(back[1].array.to_float(), (std::vector<float>{3, -4}));
    if (compress) EXPECT_LT(std::filesystem::file_size(path), 10000u);
    else EXPECT_GT(std::filesystem::file_size(path), 40000u);
  }
}

TEST(NpzErrors, TruncatedAndNotZip) {
  bs::test::TempDir tmp;
  std::vector<uint8_t> good = read_file(fixture("deflated.npz"));
  bs::test::write_bytes(tmp / "trunc.npz", std::vector<uint8_t>(good.begin(), good.begin() + good.size() / 2));
  expect_error_at([&] { read_npz(tmp / "trunc.npz"); }, tmp / "trunc.npz", "cannot open as .npz");
  bs::test::write_text(tmp / "text.npz", "hello, not a zip");
  expect_error_at([&] { read_npz(tmp / "text.npz"); }, tmp / "text.npz", "cannot open as .npz");
  // A deflated member whose compressed bytes are damaged: the zip directory is intact.
  std::vector<uint8_t> damaged = good;
  for (size_t i = 60; i < 90; ++i) damaged[i] ^= 0x5a;
  bs::test::write_bytes(tmp / "damaged.npz", damaged);
  EXPECT_THROW(read_npz(tmp / "damaged.npz"), Error);
}

// Builds an IDX image file by hand: magic 00 00 08 03, dims 3 x 2 x 2, then 12 bytes.
std::vector<uint8_t> idx_bytes() {
  std::vector<uint8_t> b = {0, 0, 8, 3, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 2};
  for (int i = 0; i < 12; ++i) b.push_back(static_cast<uint8_t>(i * 20));
  return b;
}

void write_gz(const std::string& path, const std::vector<uint8_t>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

TEST(Idx, ReadsRawAndGzipped) {
  bs::test::TempDir tmp;
  bs::test::write_bytes(tmp / "raw.idx", idx_bytes());
  write_gz(tmp / "z.idx.gz", idx_bytes());
  for (const std::string& p : {tmp / "raw.idx", tmp / "z.idx.gz"}) {
    IdxFile f = read_idx(p);
    EXPECT_EQ(f.dims, (std::vector<int64_t>{3, 2, 2}));
    ASSERT_EQ(f.values.size(), 12u);
    EXPECT_EQ(f.values[11], 220.0f);
    IdxFile two = read_idx(p, 2);
    EXPECT_EQ(two.values.size(), 8u);
  }
}

TEST(Idx, ShippedFashionMnistHeadersAndFirstLabels) {
  IdxFile labels = read_idx(bs::test::data_file("fashion-mnist/t10k-labels-idx1-ubyte.gz"));
  ASSERT_EQ(labels.dims, (std::vector<int64_t>{10000}));
  // The first test items are: ankle boot, pullover, trouser, trouser (Zalando's published order).
  EXPECT_EQ(labels.values[0], 9);
  EXPECT_EQ(labels.values[1], 2);
  EXPECT_EQ(labels.values[2], 1);
  IdxFile images = read_idx(bs::test::data_file("fashion-mnist/t10k-images-idx3-ubyte.gz"), 10);
  EXPECT_EQ(images.dims, (std::vector<int64_t>{10, 28, 28}));
  IdxFile big = read_idx(bs::test::data_file("ece408-2019sp/t10k-48-images-idx3-ubyte.gz"), 1);
  EXPECT_EQ(big.dims, (std::vector<int64_t>{1, 48, 48}));
}

TEST(IdxErrors, TruncatedCorruptMagicAndTooMany) {
  bs::test::TempDir tmp;
  std::vector<uint8_t> b = idx_bytes();
  bs::test::write_bytes(tmp / "trunc.idx", std::vector<uint8_t>(b.begin(), b.end() - 3));
  expect_error_at([&] { read_idx(tmp / "trunc.idx"); }, tmp / "trunc.idx", "truncated IDX file");
  std::vector<uint8_t> bad = b;
  bad[2] = 0x42;
  bs::test::write_bytes(tmp / "magic.idx", bad);
  expect_error_at([&] { read_idx(tmp / "magic.idx"); }, tmp / "magic.idx", "wrong magic 0x00004203");
  expect_error_at([&] { read_idx(tmp / "trunc.idx", 5); }, tmp / "trunc.idx", "holds 3 items, 5 requested");
  // A gzip stream cut in the middle.
  write_gz(tmp / "z.gz", std::vector<uint8_t>(20000, 7));
  std::vector<uint8_t> z = read_file(tmp / "z.gz");
  std::vector<uint8_t> zb = idx_bytes();
  write_gz(tmp / "ok.gz", zb);
  std::vector<uint8_t> ok = read_file(tmp / "ok.gz");
  bs::test::write_bytes(tmp / "cut.gz", std::vector<uint8_t>(ok.begin(), ok.begin() + ok.size() - 12));
  EXPECT_THROW(read_idx(tmp / "cut.gz"), Error);
  std::vector<uint8_t> corrupt = ok;
  for (size_t i = 12; i < corrupt.size() - 8; ++i) corrupt[i] ^= 0xff;
  bs::test::write_bytes(tmp / "corrupt.gz", corrupt);
  expect_error_at([&] { read_idx(tmp / "corrupt.gz"); }, tmp / "corrupt.gz", "");
  expect_error_at([&] { read_idx(tmp / "missing.idx"); }, tmp / "missing.idx", "cannot open");
}

TEST(MxnetParams, ReadsTheEce408Checkpoint) {
  std::vector<NamedArray> p = read_mxnet_params(bs::test::data_file("ece408-2019sp/ece408-0002.params"));
  std::map<std::string, std::vector<int64_t>> shapes;
  for (auto& a : p) shapes[a.name] = a.array.shape;
  EXPECT_EQ(shapes.size(), 6u);
  EXPECT_EQ(shapes["arg:new0_weight"], (std::vector<int64_t>{6, 1, 5, 5}));
  EXPECT_EQ(shapes["arg:new1_weight"], (std::vector<int64_t>{16, 6, 5, 5}));
  EXPECT_EQ(shapes["arg:fullyconnected0_weight"], (std::vector<int64_t>{140, 5184}));
  EXPECT_EQ(shapes["arg:fullyconnected0_bias"], (std::vector<int64_t>{140}));
  EXPECT_EQ(shapes["arg:fullyconnected1_weight"], (std::vector<int64_t>{10, 140}));
  EXPECT_EQ(shapes["arg:fullyconnected1_bias"], (std::vector<int64_t>{10}));
}

// A hand-built file in the legacy NDArray layout (no per-array magic, uint32 dims), float16 data.
TEST(MxnetParams, ReadsLegacyLayoutAndFloat16) {
  bs::test::TempDir tmp;
  std::vector<uint8_t> b;
  auto u64 = [&](uint64_t v) { for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i))); };
  auto u32 = [&](uint32_t v) { for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i))); };
  u64(0x112); u64(0); u64(1);
  u32(2); u32(1); u32(2);   // ndim 2, dims 1 x 2
  u32(1); u32(0); u32(2);   // cpu, id 0, float16
  b.push_back(0x00); b.push_back(0x3c);  // 1.0
  b.push_back(0x00); b.push_back(0xc0);  // -2.0
  u64(1); u64(5);
  for (char c : std::string("arg:w")) b.push_back(static_cast<uint8_t>(c));
  bs::test::write_bytes(tmp / "legacy.params", b);
  std::vector<NamedArray> p = read_mxnet_params(tmp / "legacy.params");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].name, "arg:w");
  EXPECT_EQ(p[0].array.shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(p[0].array.to_float(), (std::vector<float>{1.0f, -2.0f}));
}

TEST(MxnetParamsErrors, TruncatedWrongMagicAndBadDtype) {
  bs::test::TempDir tmp;
  std::vector<uint8_t> good = read_file(bs::test::data_file("ece408-2019sp/ece408-0002.params"));
  bs::test::write_bytes(tmp / "trunc.params", std::vector<uint8_t>(good.begin(), good.begin() + 5000));
  expect_error_at([&] { read_mxnet_params(tmp / "trunc.params"); }, tmp / "trunc.params", "truncated .params file");
  std::vector<uint8_t> magic = good;
  magic[0] = 0x13;
  bs::test::write_bytes(tmp / "magic.params", magic);
  expect_error_at([&] { read_mxnet_params(tmp / "magic.params"); }, tmp / "magic.params", "wrong magic");
  std::vector<uint8_t> dtype = good;
  // First array: list header 24 bytes, V2 magic 4, stype 4, ndim 4, one dim 8, dev 8 -> type flag at 52.
  dtype[52] = 9;
  bs::test::write_bytes(tmp / "dtype.params", dtype);
  expect_error_at([&] { read_mxnet_params(tmp / "dtype.params"); }, tmp / "dtype.params", "unsupported dtype (MXNet type flag 9)");
}

}  // namespace
