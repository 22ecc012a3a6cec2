// .npy reading against fixtures written by NumPy (tests/fixtures/make_npy_fixtures.py), writing by round
// trip, and every malformed-file error.
#include <gtest/gtest.h>

#include "test_util.hpp"
#include "weights_tools/error.hpp"
#include "weights_tools/io.hpp"
#include "weights_tools/npy.hpp"

using namespace bs;
using bs::test::fixture;

namespace {

// Fixture arrays hold arange(24).reshape(2, 3, 4), times 0.5 for floats.
void expect_arange(const Array& a, DType dt, double scale) {
  EXPECT_EQ(a.dtype, dt);
  ASSERT_EQ(a.shape, (std::vector<int64_t>{2, 3, 4}));
  std::vector<float> v = a.to_float();
  for (int i = 0; i < 24; ++i) EXPECT_EQ(v[i], static_cast<float>(i * scale)) << "element " << i;
}

struct DtypeCase {
  const char* file;
  DType dtype;
  double scale;
};

class NpyDtype : public ::testing::TestWithParam<DtypeCase> {};

TEST_P(NpyDtype, ReadsValuesInCOrder) {
  const DtypeCase& c = GetParam();
  expect_arange(read_npy(fixture(c.file)), c.dtype, c.scale);
}

INSTANTIATE_TEST_SUITE_P(
    AllDtypesBothEndians, NpyDtype,
    ::testing::Values(DtypeCase{"f4_le.npy", DType::f32, 0.5}, DtypeCase{"f4_be.npy", DType::f32, 0.5},
                      DtypeCase{"f8_le.npy", DType::f64, 0.5}, DtypeCase{"f8_be.npy", DType::f64, 0.5},
                      DtypeCase{"f2_le.npy", DType::f16, 0.5}, DtypeCase{"f2_be.npy", DType::f16, 0.5},
                      DtypeCase{"i4_le.npy", DType::i32, 1}, DtypeCase{"i4_be.npy", DType::i32, 1},
                      DtypeCase{"i8_le.npy", DType::i64, 1}, DtypeCase{"i8_be.npy", DType::i64, 1},
                      DtypeCase{"u1_le.npy", DType::u8, 1}, DtypeCase{"f4_fortran.npy", DType::f32, 0.5},
                      DtypeCase{"f8_be_fortran.npy", DType::f64, 0.5}, DtypeCase{"f4_v2.npy", DType::f32, 0.5},
                      DtypeCase{"f4_v3.npy", DType::f32, 0.5}));

TEST(Npy, OneDimensionalAndScalar) {
  Array v = read_npy(fixture("f4_1d.npy"));
  EXPECT_EQ(v.shape, (std::vector<int64_t>{5}));
  EXPECT_EQ(v.to_float()[4], 2.0f);
  Array s = read_npy(fixture("f4_scalar.npy"));
  EXPECT_TRUE(s.shape.empty());
  EXPECT_EQ(s.to_float(), std::vector<float>{3.5f});
}

TEST(Npy, WriteThenReadRoundTripsEveryShape) {
  bs::test::TempDir tmp;
  for (std::vector<int64_t> shape : {std::vector<int64_t>{}, {7}, {2, 3}, {96, 3, 11, 11}}) {
    std::vector<float> vals(static_cast<size_t>(shape_size(shape)));
    for (size_t i = 0; i < vals.size(); ++i) vals[i] = static_cast<float>(i) * 0.25f - 3.0f;
    write_npy(tmp / "x.npy", Array::from_float(shape, vals));
    Array back = read_npy(tmp / "x.npy");
    EXPECT_EQ(back.shape, shape);
    EXPECT_EQ(back.to_float(), vals);
  }
}

TEST(Npy, HeaderIsAlignedAsNumPyWritesIt) {
  std::vector<uint8_t> b = encode_npy(Array::from_float({2, 2}, {1, 2, 3, 4}));
  const size_t header_len = b[8] | b[9] << 8;
  EXPECT_EQ((10 + header_len) % 64, 0u);
  EXPECT_EQ(b[10 + header_len - 1], '\n');
  std::string header(b.begin() + 10, b.begin() + 10 + header_len);
  EXPECT_NE(header.find("'shape': (2, 2)"), std::string::npos) << header;
}

TEST(Npy, HalfConversionRoundsToNearestEven) {
  EXPECT_EQ(half_to_float(0x3c00), 1.0f);
  EXPECT_EQ(half_to_float(0xc000), -2.0f);
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(half_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(1e6f), 0x7c00);                       // overflow to inf
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // halfway, rounds to even
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);
  for (uint16_t h = 0; h < 0x7c00; ++h) ASSERT_EQ(float_to_half(half_to_float(h)), h) << h;
}

void expect_error(const std::string& path, const std::string& needle) {
  test::expect_error_at([&] { read_npy(path); }, path, needle);
}

TEST(NpyErrors, EachMalformedFileNamesFileAndProblem) {
  bs::test::TempDir tmp;
  std::vector<uint8_t> good = read_file(fixture("f4_le.npy"));

  std::vector<uint8_t> truncated(good.begin(), good.end() - 5);
  bs::test::write_bytes(tmp / "truncated.npy", truncated);
  expect_error(tmp / "truncated.npy", "truncated .npy data");

  std::vector<uint8_t> short_header(good.begin(), good.begin() + 40);
  bs::test::write_bytes(tmp / "short_header.npy", short_header);
  expect_error(tmp / "short_header.npy", "truncated .npy header");

  std::vector<uint8_t> magic = good;
  magic[1] = 'X';
  bs::test::write_bytes(tmp / "magic.npy", magic);
  expect_error(tmp / "magic.npy", "wrong magic");

  std::vector<uint8_t> version = good;
  version[6] = 9;
  bs::test::write_bytes(tmp / "version.npy", version);
  expect_error(tmp / "version.npy", "unsupported .npy format version 9");

  std::vector<uint8_t> header = good;
  std::string h(header.begin() + 10, header.begin() + 60);
  size_t at = h.find("'shape'");
  header[10 + at + 1] = 'X';  // 'Xhape'
  bs::test::write_bytes(tmp / "header.npy", header);
  expect_error(tmp / "header.npy", "corrupt .npy header");

  std::vector<uint8_t> extra = good;
  extra.push_back(0);
  bs::test::write_bytes(tmp / "extra.npy", extra);
  expect_error(tmp / "extra.npy", "bytes after the data");

  expect_error(fixture("c8.npy"), "unsupported dtype '<c8'");
  expect_error(fixture("bool.npy"), "unsupported dtype '|b1'");
  expect_error(tmp / "missing.npy", "cannot open");
}

TEST(NpyErrors, ShapeCheckNamesBothShapes) {
  try {
    read_npy_float(fixture("f4_le.npy"), {2, 3, 5});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("shape (2, 3, 5) expected, file has (2, 3, 4)"), std::string::npos) << e.what();
  }
}

TEST(NpyErrors, FailedWriteLeavesNothingBehind) {
  bs::test::TempDir tmp;
  EXPECT_THROW(write_npy(tmp / "no_such_dir/x.npy", Array::from_float({1}, {1})), Error);
  EXPECT_TRUE(std::filesystem::is_empty(tmp.str()));
}

}  // namespace
