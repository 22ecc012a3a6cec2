// Hostile and broken inputs for every reader: each must be refused with one bs::Error that names the file and
// the problem, before anything large is allocated. The cases are hand-built byte by byte (the expected message
// is read off the bytes), and include each reader's finding from the fuzzers (fuzz/): see experiments/fuzzing.md.
#include <gtest/gtest.h>

#include <zlib.h>

#include <cstring>
#include <string>
#include <vector>

#include "kernels/model/model.hpp"
#include "test_util.hpp"
#include "weights_tools/bvlc.hpp"
#include "weights_tools/idx.hpp"
#include "weights_tools/io.hpp"
#include "weights_tools/limits.hpp"
#include "weights_tools/mxnet_import.hpp"
#include "weights_tools/mxnet_params.hpp"
#include "weights_tools/npy.hpp"
#include "weights_tools/npz.hpp"
#include "weights_tools/unpickle.hpp"

namespace bs {
namespace {

using Bytes = std::vector<uint8_t>;
using bs::test::expect_error_at;

Bytes str_bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

// A .npy image (version 1.0) with the header dict given as text and `data` after it.
Bytes npy(const std::string& dict, const Bytes& data = {}) {
  std::string h = dict;
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  // Magic, version, header length, header: assembled as one string (inserting h into a 10-byte vector drew GCC 12's
  // false -Warray-bounds from the inlined memcpy).
  const std::string head = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(h.size() & 0xff) +
                           static_cast<char>(h.size() >> 8) + h;
  Bytes b(head.begin(), head.end());
  b.insert(b.end(), data.begin(), data.end());
  return b;
}
std::string shape_dict(const std::string& shape, const std::string& descr = "<f4") {
  return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
}

// Restores the tensor limit a test changed.
struct LimitGuard {
  uint64_t saved = max_tensor_bytes();
  ~LimitGuard() { set_max_tensor_bytes(saved); }
};

// ---------------------------------------------------------------- the checked helpers
TEST(Limits, CheckedElementsRefusesNegativeHugeAndOverflowingShapes) {
  EXPECT_EQ(checked_elements({2, 3, 4}, "t"), 24u);
  EXPECT_EQ(checked_elements({}, "t"), 1u);               // a scalar
  EXPECT_EQ(checked_elements({0, int64_t{1} << 40}, "t"), 0u);  // empty
  // ... but the other dimensions' product must still fit (strides are computed from it): a fuzzer's find.
  expect_error_at([] { checked_elements({0, int64_t{1} << 40, int64_t{1} << 40}, "x.npy"); }, "x.npy", "overflows 64 bits");
  expect_error_at([] { checked_elements({3, -1}, "x.npy"); }, "x.npy", "negative dimension -1");
  expect_error_at([] { checked_elements({(int64_t{1} << 40) + 1}, "x.npy"); }, "x.npy", "above the limit of 2^40");
  // 2^32 * 2^32 = 2^64: wraps to 0 in unchecked 64-bit arithmetic.
  expect_error_at([] { checked_elements({int64_t{1} << 32, int64_t{1} << 32}, "x.npy"); }, "x.npy", "overflows 64 bits");
  expect_error_at([] { checked_elements(std::vector<int64_t>(33, 1), "x.npy"); }, "x.npy", "33 dimensions");
  expect_error_at([] { checked_mul(uint64_t{1} << 40, uint64_t{1} << 30, "f", "the size"); }, "f", "the size overflows 64 bits");
  expect_error_at([] { checked_add(UINT64_MAX, 1, "f", "the end"); }, "f", "the end overflows 64 bits");
}

TEST(Limits, ByteSizesParseAndTheTensorLimitApplies) {
  EXPECT_EQ(parse_byte_size("123", "--f"), 123u);
  EXPECT_EQ(parse_byte_size("512K", "--f"), 512u << 10);
  EXPECT_EQ(parse_byte_size("64M", "--f"), uint64_t{64} << 20);
  EXPECT_EQ(parse_byte_size("16G", "--f"), uint64_t{16} << 30);
  EXPECT_EQ(parse_byte_size("16GiB", "--f"), uint64_t{16} << 30);
  EXPECT_EQ(parse_byte_size("2tb", "--f"), uint64_t{2} << 40);
  expect_error_at([] { parse_byte_size("lots", "--max-tensor-bytes"); }, "--max-tensor-bytes", "found 'lots'");
  expect_error_at([] { parse_byte_size("0", "--max-tensor-bytes"); }, "--max-tensor-bytes", "at least 1 byte");
  expect_error_at([] { parse_byte_size("99999999999T", "--max-tensor-bytes"); }, "--max-tensor-bytes", "too large");
  expect_error_at([] { parse_byte_size("5X", "--max-tensor-bytes"); }, "--max-tensor-bytes", "found '5X'");
  EXPECT_EQ(byte_size_str(uint64_t{16} << 30), "16 GiB");
  EXPECT_EQ(byte_size_str(1536), "1.5 KiB");

  LimitGuard guard;
  set_max_tensor_bytes(1000);
  EXPECT_EQ(checked_tensor_bytes({250}, 4, "t"), 1000u);
  expect_error_at([] { checked_tensor_bytes({251}, 4, "x.npy"); }, "x.npy", "above the limit of 1000 bytes per tensor");
}

// ---------------------------------------------------------------- .npy
TEST(HostileNpy, TheIssuesWrappingShapeIsRefused) {
  // The report: 128 bytes whose shape's element count wraps around 64 bits (2^32 * 2^32 * 4 bytes = 0 mod 2^64)
  // was accepted by inspect, and rearrange crashed on it.
  const Bytes b = npy(shape_dict("(4294967296, 4294967296)"));
  ASSERT_EQ(b.size(), 128u);
  expect_error_at([&] { parse_npy(b.data(), b.size(), "wrap.npy"); }, "wrap.npy", "overflows 64 bits");
  bs::test::TempDir tmp;
  bs::test::write_bytes(tmp / "wrap.npy", b);
  expect_error_at([&] { read_npy(tmp / "wrap.npy"); }, tmp / "wrap.npy", "overflows 64 bits");
}

TEST(HostileNpy, EveryBrokenHeaderIsOneError) {
  struct Case { Bytes bytes; const char* needle; };
  const std::vector<Case> cases = {
      {npy(shape_dict("(1099511627776,)")), "above the limit"},                 // 2^40 floats: 4 TiB
      {npy(shape_dict("(1099511627777,)")), "shape dimension too large"},        // above 2^40
      {npy("{'descr': '>f2', 'fortran_order': True, 'shape': (2, 3, 0, 1099511627776, 1099511627776), }"),
       "overflows 64 bits"},  // the fuzzer's: empty, but its Fortran strides overflowed
      {npy(shape_dict("(-1, 3)")), "shape holds a non-integer"},                 // negative
      {npy(shape_dict("((2, 3),)")), "shape holds a non-integer"},               // nested
      {npy(shape_dict("(" + std::string(40 * 3, ' ') + ")")), ""},               // () with blanks: scalar, data missing
      {npy(shape_dict("(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)")), "33 dimensions"},
      {npy(shape_dict("(2,)", "<c8")), "unsupported dtype '<c8'"},              // complex
      {npy(shape_dict("(2,)", "<U4")), "unsupported dtype '<U4'"},              // unicode
      {npy(shape_dict("(2,)"), Bytes(7, 0)), "needs 8 bytes, file has 7"},      // truncated data
      {npy(shape_dict("(2,)"), Bytes(9, 0)), "1 bytes after the data"},         // trailing garbage
      {npy("{'descr': '<f4', 'shape': (2,), }"), "lacks one of"},
      {npy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }"), "neither True nor False"},
      {npy("{'descr': '<f4"), "unterminated string"},
      {str_bytes("\x93NUMPZ\x01\x00\x00\x00"), "wrong magic"},
      {Bytes{0x93, 'N', 'U', 'M', 'P', 'Y', 9, 0, 0x10, 0}, "format version 9.0"},
      {Bytes{0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0xff, 0xff, '{', '}'}, "truncated .npy header"},  // beyond the file
      {Bytes{0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0xff, 0xff, 0xff, 0xff}, "truncated .npy header"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    expect_error_at([&] { parse_npy(cases[i].bytes.data(), cases[i].bytes.size(), "bad.npy"); }, "bad.npy", cases[i].needle);
  }
}

// ---------------------------------------------------------------- .npz
// Sets a stored member's declared uncompressed size in both the local header and the central directory.
void set_zip_sizes(Bytes& z, uint32_t size) {
  for (size_t i = 0; i + 4 <= z.size(); ++i) {
    if (std::memcmp(&z[i], "PK\x03\x04", 4) == 0) std::memcpy(&z[i + 22], &size, 4);
    if (std::memcmp(&z[i], "PK\x01\x02", 4) == 0) std::memcpy(&z[i + 24], &size, 4);
  }
}

TEST(HostileNpz, DeclaredSizesAreCheckedBeforeReading) {
  bs::test::TempDir tmp;
  const std::vector<NamedArray> arrays = {{"w", Array::from_float({64}, std::vector<float>(64, 1.0f))}};
  write_npz(tmp / "deflated.npz", arrays, true);
  write_npz(tmp / "stored.npz", arrays, false);
  Bytes deflated = read_file(tmp / "deflated.npz"), stored = read_file(tmp / "stored.npz");
  ASSERT_EQ(parse_npz(deflated.data(), deflated.size(), "ok.npz").size(), 1u);

  // A zip bomb's promise: 4 GiB from a few dozen deflated bytes (deflate expands at most 1032:1).
  Bytes bomb = deflated;
  set_zip_sizes(bomb, 0xfffffff0u);
  expect_error_at([&] { parse_npz(bomb.data(), bomb.size(), "bomb.npz"); }, "bomb.npz:w.npy", "cannot hold the 4294967280 bytes declared");
  // A stored member whose size disagrees with its bytes.
  Bytes liar = stored;
  set_zip_sizes(liar, 100000);
  EXPECT_THROW(parse_npz(liar.data(), liar.size(), "liar.npz"), Error);
  // Truncated archives and non-archives.
  for (size_t cut : {stored.size() / 2, size_t{30}, size_t{3}}) {
    Bytes t(stored.begin(), stored.begin() + static_cast<std::ptrdiff_t>(cut));
    expect_error_at([&] { parse_npz(t.data(), t.size(), "cut.npz"); }, "cut.npz", "");
  }
  const Bytes junk = str_bytes("PK this is not a zip archive at all");
  expect_error_at([&] { parse_npz(junk.data(), junk.size(), "junk.npz"); }, "junk.npz", "cannot open as .npz");
}

TEST(HostileNpz, AMemberWhoseHeaderDeclaresMoreThanItHolds) {
  // A 5000-element header on a member that holds 16 bytes of data (large enough that the header is read first).
  Bytes member = npy(shape_dict("(5000,)"), Bytes(16, 0));
  member.resize(4200, 0);
  // write_npz encodes arrays faithfully, so build the stored zip by hand: local header, data, central directory.
  Bytes z;
  auto u16 = [&](uint16_t v) { z.push_back(v & 0xff); z.push_back(v >> 8); };
  auto u32 = [&](uint32_t v) { for (int i = 0; i < 4; ++i) z.push_back(static_cast<uint8_t>(v >> (8 * i))); };
  const std::string name = "x.npy";
  const uint32_t crc = static_cast<uint32_t>(crc32(0, member.data(), static_cast<uInt>(member.size())));
  u32(0x04034b50); u16(20); u16(0); u16(0); u16(0); u16(0); u32(crc); u32(static_cast<uint32_t>(member.size()));
  u32(static_cast<uint32_t>(member.size())); u16(static_cast<uint16_t>(name.size())); u16(0);
  z.insert(z.end(), name.begin(), name.end());
  z.insert(z.end(), member.begin(), member.end());
  const uint32_t cd = static_cast<uint32_t>(z.size());
  u32(0x02014b50); u16(20); u16(20); u16(0); u16(0); u16(0); u16(0); u32(crc); u32(static_cast<uint32_t>(member.size()));
  u32(static_cast<uint32_t>(member.size())); u16(static_cast<uint16_t>(name.size())); u16(0); u16(0); u16(0); u16(0);
  u32(0); u32(0);
  z.insert(z.end(), name.begin(), name.end());
  const uint32_t cd_size = static_cast<uint32_t>(z.size()) - cd;
  u32(0x06054b50); u16(0); u16(0); u16(1); u16(1); u32(cd_size); u32(cd); u16(0);
  expect_error_at([&] { parse_npz(z.data(), z.size(), "m.npz"); }, "m.npz:x.npy", "the .npy header declares (5000,)");
}

// ---------------------------------------------------------------- IDX
Bytes idx_header(uint8_t type, const std::vector<uint32_t>& dims) {
  Bytes b = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims) for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(d >> s));
  return b;
}
Bytes gzip(const Bytes& raw) {
  z_stream zs{};
  deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  Bytes out(deflateBound(&zs, static_cast<uLong>(raw.size())) + 32);
  zs.next_in = const_cast<Bytef*>(raw.data());
  zs.avail_in = static_cast<uInt>(raw.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

TEST(HostileIdx, TheIssues2To48ImagesAreRefusedBeforeAllocating) {
  // 2^48 images of one byte: (2^16, 2^16, 2^16) ubyte, in a 16-byte file. This died with std::bad_alloc.
  const Bytes b = idx_header(0x08, {65536, 65536, 65536});
  expect_error_at([&] { parse_idx(b.data(), b.size(), "huge.idx"); }, "huge.idx", "above the limit");
  LimitGuard guard;
  set_max_tensor_bytes(uint64_t{1} << 62);  // even with the limit raised, the file cannot hold them
  expect_error_at([&] { parse_idx(b.data(), b.size(), "huge.idx"); }, "huge.idx", "the file cannot hold more than 0");
  const Bytes gz = gzip(b);  // gzipped: deflate's largest ratio bounds what it can hold
  expect_error_at([&] { parse_idx(gz.data(), gz.size(), "huge.idx.gz"); }, "huge.idx.gz", "the file cannot hold more than");
}

TEST(HostileIdx, EveryBrokenHeaderIsOneError) {
  Bytes two = idx_header(0x08, {2, 2});
  two.insert(two.end(), {1, 2, 3, 4});
  ASSERT_EQ(parse_idx(two.data(), two.size(), "ok.idx").values, (std::vector<float>{1, 2, 3, 4}));
  struct Case { Bytes bytes; const char* needle; };
  Bytes many_dims = idx_header(0x08, std::vector<uint32_t>(40, 1));
  Bytes garbage_gz = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xde, 0xad, 0xbe, 0xef, 0x00, 0x11};
  const std::vector<Case> cases = {
      {{0, 0, 8}, "truncated IDX file: the magic number"},
      {{1, 0, 8, 1, 0, 0, 0, 1, 5}, "wrong magic 0x01000801"},
      {{0, 0, 0x0A, 1, 0, 0, 0, 1, 5}, "wrong magic 0x00000a01"},  // type 0x0A does not exist
      {{0, 0, 8, 0}, "wrong magic 0x00000800"},                    // no dimensions
      {many_dims, "40 dimensions"},
      {idx_header(0x08, {3}), "needs 3 bytes of data, the file cannot hold more than 0"},
      {{0, 0, 8, 2, 0, 0}, "truncated IDX file: the dimensions"},
      {idx_header(0x0E, {0xffffffffu, 0xffffffffu}), "overflows 64 bits"},  // (2^32 - 1)^2 doubles
      {garbage_gz, "corrupt gzip stream"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    expect_error_at([&] { parse_idx(cases[i].bytes.data(), cases[i].bytes.size(), "bad.idx"); }, "bad.idx", cases[i].needle);
  }
  const Bytes cut = gzip(two);
  const Bytes half(cut.begin(), cut.begin() + static_cast<std::ptrdiff_t>(cut.size() / 2));
  expect_error_at([&] { parse_idx(half.data(), half.size(), "half.gz"); }, "half.gz", "truncated IDX file");
}

// ---------------------------------------------------------------- MXNet .params
struct ParamsWriter {
  Bytes b;
  void u32(uint32_t v) { for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i))); }
  void u64(uint64_t v) { for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i))); }
  // One V2 array header with `dims` and float32 type, and `data_bytes` zero bytes.
  void array(const std::vector<int64_t>& dims, size_t data_bytes) {
    u32(0xF993FAC9); u32(0); u32(static_cast<uint32_t>(dims.size()));
    for (int64_t d : dims) u64(static_cast<uint64_t>(d));
    u32(1); u32(0); u32(0);
    b.insert(b.end(), data_bytes, 0);
  }
};

TEST(HostileParams, DimensionsCountsAndNamesAreChecked) {
  struct Case { Bytes bytes; const char* needle; };
  std::vector<Case> cases;
  auto file = [&](const std::vector<int64_t>& dims, size_t data, const char* needle) {
    ParamsWriter w;
    w.u64(0x112); w.u64(0); w.u64(1);
    w.array(dims, data);
    w.u64(0);
    cases.push_back({w.b, needle});
  };
  file({int64_t{1} << 32, int64_t{1} << 32}, 0, "overflows 64 bits");
  file({int64_t{1} << 35}, 0, "above the limit");
  file({-5}, 0, "corrupt dimension -5");
  file({(int64_t{1} << 40) + 1}, 0, "corrupt dimension");
  file({4}, 12, "truncated .params file");  // 12 of 16 bytes of data: the name count comes up short
  {
    ParamsWriter w;
    w.u64(0x112); w.u64(0); w.u64(uint64_t{1} << 60);  // an absurd array count
    cases.push_back({w.b, "arrays in 24 bytes"});
  }
  {
    ParamsWriter w;
    w.u64(0x112); w.u64(0); w.u64(1);
    w.array({1}, 4);
    w.u64(1); w.u64(uint64_t{1} << 50);  // an absurd name length
    cases.push_back({w.b, "name length"});
  }
  {
    ParamsWriter w;
    w.u64(0x112); w.u64(0); w.u64(1);
    w.u32(0xF993FAC9); w.u32(0); w.u32(40);  // 40 dimensions
    cases.push_back({w.b, "corrupt number of dimensions 40"});
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    expect_error_at([&] { parse_mxnet_params(cases[i].bytes, "bad.params"); }, "bad.params", cases[i].needle);
  }
}

TEST(HostileParams, AnArrayWithNoDimensionsHasNoElements) {
  // The fuzzer's first finding: a 0-dimensional NDArray (MXNet's "none") came back as a scalar with no bytes,
  // and converting it read 4 bytes from nowhere.
  ParamsWriter w;
  w.u64(0x112); w.u64(0); w.u64(1);
  w.u32(0);  // legacy layout, ndim 0
  w.u64(0);
  const std::vector<NamedArray> p = parse_mxnet_params(w.b, "none.params");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].array.size(), 0);
  EXPECT_TRUE(p[0].array.to_float().empty());
}

// ---------------------------------------------------------------- pickles (bvlc_alexnet.npy)
TEST(HostilePickle, CyclesAndDeepNestingAreFreedAndRefused) {
  // A list that contains itself: ] q0 h0 a .   (ASan's leak check sees the graph freed.)
  const Bytes cycle = {0x80, 2, ']', 'q', 0, 'h', 0, 'a', '.'};
  expect_error_at([&] { parse_bvlc(cycle, "cycle.npy"); }, "cycle.npy", "holds a list, expected a dict");
  // 50,000 nested lists: pushed, then each appended into the one below it.
  Bytes deep = {0x80, 2};
  for (int i = 0; i < 50000; ++i) deep.push_back(']');
  for (int i = 0; i < 49999; ++i) deep.push_back('a');
  deep.push_back('.');
  expect_error_at([&] { parse_bvlc(deep, "deep.npy"); }, "deep.npy", "holds a list, expected a dict");
}

TEST(HostilePickle, ArraysMayNotMultiplyTheFile) {
  // One 4000-byte buffer, rebuilt into arrays 2000 times through the memo: 8 MB of arrays from a 10 kB file.
  Bytes b = {0x80, 2, 'c'};
  auto text = [&](const std::string& s) { b.insert(b.end(), s.begin(), s.end()); };
  text("numpy.core.numeric\n_frombuffer\n");
  b.push_back('q'); b.push_back(0);
  b.push_back('T'); for (uint32_t v = 4000, i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  b.insert(b.end(), 4000, 0);
  b.push_back('q'); b.push_back(1);
  text("cnumpy\ndtype\n"); b.push_back('U'); b.push_back(2); text("f4"); b.push_back(0x85); b.push_back('R');
  b.push_back('q'); b.push_back(2);
  b.push_back(']');
  for (int i = 0; i < 2000; ++i) {
    b.push_back('h'); b.push_back(0);
    b.push_back('('); b.push_back('h'); b.push_back(1); b.push_back('h'); b.push_back(2);
    b.push_back('M'); b.push_back(1000 & 0xff); b.push_back(1000 >> 8); b.push_back(0x85);
    b.push_back('U'); b.push_back(1); b.push_back('C');
    b.push_back('t'); b.push_back('R'); b.push_back('a');
  }
  b.push_back('.');
  expect_error_at([&] { (void)unpickle(b.data(), b.size(), "many.npy"); }, "many.npy", "would rebuild more than");
}

TEST(HostilePickle, ShapesThatOverflowAndForeignDtypes) {
  auto frombuffer = [](const std::string& shape_ops, const std::string& dtype, size_t data) {
    Bytes b = {0x80, 2, 'c'};
    auto text = [&](const std::string& s) { b.insert(b.end(), s.begin(), s.end()); };
    text("numpy.core.numeric\n_frombuffer\n(");
    b.push_back('T'); for (uint32_t i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(data >> (8 * i)));
    b.insert(b.end(), data, 0);
    text("cnumpy\ndtype\n"); b.push_back('U'); b.push_back(static_cast<uint8_t>(dtype.size())); text(dtype); b.push_back(0x85); b.push_back('R');
    text(shape_ops);
    b.push_back('U'); b.push_back(1); b.push_back('C');
    b.push_back('t'); b.push_back('R'); b.push_back('.');
    return b;
  };
  // shape (2^32, 2^32) via LONG1 integers of 5 bytes
  const std::string big = std::string("\x8a\x05\x00\x00\x00\x00\x01", 7);
  const Bytes over = frombuffer("(" + big + big + "t", "f4", 0);
  expect_error_at([&] { (void)unpickle(over.data(), over.size(), "over.npy"); }, "over.npy", "overflows 64 bits");
  const Bytes neg = frombuffer(std::string("(J\xff\xff\xff\xff", 6) + "t", "f4", 0);
  expect_error_at([&] { (void)unpickle(neg.data(), neg.size(), "neg.npy"); }, "neg.npy", "array dimension -1");
  const Bytes c16 = frombuffer("(K\x02t", "c16", 32);
  expect_error_at([&] { (void)unpickle(c16.data(), c16.size(), "c16.npy"); }, "c16.npy", "unsupported array dtype 'c16'");
  const Bytes ok = frombuffer("(K\x02t", "f4", 8);
  EXPECT_EQ(unpickle(ok.data(), ok.size(), "ok.npy").root->array.shape, (std::vector<int64_t>{2}));
}

// ---------------------------------------------------------------- model.json
TEST(HostileModelJson, NumbersNestingPathsAndSizes) {
  bs::test::TempDir tmp;
  write_npy(tmp / "w.npy", Array::from_float({2, 1, 3, 3}, std::vector<float>(18, 0.5f)));
  auto model = [](const std::string& input, const std::string& layers) {
    return "{\"name\": \"m\", \"input\": " + input + ", \"layers\": [" + layers + "]}";
  };
  const std::string conv = "{\"type\": \"convolution\", \"filters\": 2, \"kernel\": 3, \"weight\": {\"file\": \"w.npy\"}}";
  ASSERT_NO_THROW(parse_model(model("[1, 8, 8]", conv), tmp.str(), "m.json"));
  struct Case { std::string text; const char* needle; };
  const std::vector<Case> cases = {
      {model("[1, 8, 8]", "{\"type\": \"relu\", \"x\": 1e309}"), "invalid JSON (number overflow"},  // the fuzzer's find
      {std::string(1000, '[') + std::string(1000, ']'), "nested deeper than 64 levels"},
      {model("[1, 8, 8]", "{\"type\": \"lrn\", \"size\": 1099511627777}"), "must be an integer of at most 2^24"},
      {model("[1, 8, 8]", "{\"type\": \"lrn\", \"size\": 3.5}"), "must be an integer"},
      {model("[1, 8, 1e300]", conv), "field 'input' must be"},
      {model("[1, 8, 8]", "{\"type\": \"convolution\", \"filters\": 2, \"kernel\": 3, \"weight\": {\"file\": \"../w.npy\"}}"),
       "must be a relative path inside the model folder"},
      {model("[1, 8, 8]", "{\"type\": \"convolution\", \"filters\": 2, \"kernel\": 3, \"weight\": {\"file\": \"/dev/zero\"}}"),
       "must be a relative path inside the model folder"},
      {model("[16777216, 16777216, 16777216]", conv), "holds more than 2^31 - 1 values per image"},
      {model("[1, 8, 8]", "{\"type\": \"max_pool\", \"kernel\": 2, \"stride\": 16777216, \"padding\": 1, \"ceil_mode\": true}"), ""},
      {model("[1, 8, 8]", "{\"type\": \"convolution\", \"filters\": 2, \"kernel\": 3}"), "missing field 'weight'"},
      {"{\"name\": \"m\", \"layers\": []}", "missing field 'input'"},
      {model("[1, 8, 8]", "{\"type\": \"lrn\", \"size\": [" + std::string(3000, '1') + "]}"), "[...]"},  // cut short
      {model("[1, 8, 8]", "{\"type\": \"lrn\", \"name\": \"" + std::string(5000, 'x') + "\", \"size\": \"a\\nb\"}"), "[...]"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    try {
      parse_model(cases[i].text, tmp.str(), "m.json");
      if (std::string(cases[i].needle).empty()) continue;  // accepted: fine, as long as nothing but Error escapes
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind("m.json", 0), 0u) << msg;
      EXPECT_NE(msg.find(cases[i].needle), std::string::npos) << msg;
      EXPECT_LE(msg.size(), 500u) << "one short line";
      EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line";
    }
  }
}

// ---------------------------------------------------------------- MXNet symbol JSON
TEST(HostileMxnetSymbol, IndicesTypesAndNumbers) {
  const std::vector<NamedArray> params = read_mxnet_params(bs::test::data_file("ece408-2019sp/ece408-0002.params"));
  MxnetImportOptions o;
  o.symbol_path = "s.json";
  o.params_path = "p.params";
  o.input_shape = {1, 48, 48};
  auto sym = [](const std::string& second_node) {
    return "{\"nodes\": [{\"op\": \"null\", \"name\": \"data\", \"inputs\": []}, " + second_node + "]}";
  };
  struct Case { std::string text; const char* needle; };
  const std::vector<Case> cases = {
      {sym("{\"op\": \"Activation\", \"name\": \"a\", \"attrs\": {\"act_type\": \"relu\"}, \"inputs\": [[1e300, 0, 0]]}"),
       "input 0 is [1e+300,0,0], not [index of an earlier node"},
      {sym("{\"op\": \"Activation\", \"name\": \"a\", \"attrs\": {\"act_type\": \"relu\"}, \"inputs\": [[7, 0, 0]]}"), "not [index of an earlier node"},
      {sym("{\"op\": \"Activation\", \"name\": \"a\", \"attrs\": {\"act_type\": \"relu\"}, \"inputs\": [[]]}"), "not [index of an earlier node"},
      {sym("{\"op\": \"Activation\", \"name\": \"a\", \"inputs\": \"x\"}"), "not a sequential chain"},
      {sym("{\"op\": 5, \"name\": \"a\", \"inputs\": [[0, 0, 0]]}"), "not a usable MXNet symbol file"},
      {sym("{\"op\": \"LRN\", \"name\": \"n\", \"attrs\": {\"nsize\": \"99999999999\"}, \"inputs\": [[0, 0, 0]]}"), "outside -2^24..2^24"},
      {sym("{\"op\": \"LRN\", \"name\": \"n\", \"attrs\": {\"nsize\": \"5\", \"alpha\": \"abc\"}, \"inputs\": [[0, 0, 0]]}"),
       "alpha='abc' is not a finite number"},
      {sym("{\"op\": \"LRN\", \"name\": \"n\", \"attrs\": {\"nsize\": \"5\", \"beta\": \"1e999\"}, \"inputs\": [[0, 0, 0]]}"), "not a finite number"},
      {"[" + std::string(100, '[') + std::string(101, ']'), "nested deeper than 64 levels"},
      {"[1, 2]", "not an MXNet symbol file"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    expect_error_at([&] { (void)convert_mxnet(cases[i].text, params, o); }, "s.json", cases[i].needle);
  }
}

// ---------------------------------------------------------------- files that are not files
TEST(HostileFiles, DevicesAndFoldersAreNotRead) {
  expect_error_at([] { read_file("/dev/zero"); }, "/dev/zero", "is not a regular file");
  bs::test::TempDir tmp;
  expect_error_at([&] { read_file(tmp.str()); }, tmp.str(), "is a directory");
}

}  // namespace
}  // namespace bs
