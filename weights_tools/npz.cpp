#include "weights_tools/npz.hpp"

#include <zip.h>

#include <algorithm>
#include <memory>

#include "weights_tools/error.hpp"
#include "weights_tools/io.hpp"
#include "weights_tools/limits.hpp"
#include "weights_tools/npy.hpp"

namespace bs {
namespace {

std::string zip_error_text(int code) {
  zip_error_t err;
  zip_error_init_with_code(&err, code);
  std::string s = zip_error_strerror(&err);
  zip_error_fini(&err);
  return s;
}

struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};

}  // namespace

std::vector<NamedArray> parse_npz(const uint8_t* data, size_t size, const std::string& path) {
  zip_error_t zerr;
  zip_error_init(&zerr);
  zip_source_t* src = zip_source_buffer_create(data, size, 0, &zerr);
  if (!src) {
    std::string e = zip_error_strerror(&zerr);
    zip_error_fini(&zerr);
    fail(path, "cannot open as .npz (" + e + ")");
  }
  std::unique_ptr<zip_t, ZipCloser> z(zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &zerr));
  if (!z) {
    zip_source_free(src);
    std::string e = zip_error_strerror(&zerr);
    zip_error_fini(&zerr);
    fail(path, "cannot open as .npz (" + e + ")");
  }
  zip_error_fini(&zerr);
  const zip_int64_t n = zip_get_num_entries(z.get(), 0);
  std::vector<NamedArray> out;
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(z.get(), i, 0, &st) != 0) fail(path, "corrupt .npz: cannot stat member " + std::to_string(i));
    const zip_uint64_t need = ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
    if ((st.valid & need) != need || !st.name) fail(path, "corrupt .npz: member " + std::to_string(i) + " lacks its name or sizes");
    std::string name = st.name;
    const std::string where = path + ":" + name;
    if (name.size() < 4 || name.compare(name.size() - 4, 4, ".npy") != 0)
      fail(where, "member is not a .npy file");
    // What the archive can hold, before anything is allocated: a stored member is as large as its compressed
    // bytes, a deflated one at most 1032 times (deflate's largest ratio), and neither more than the file.
    if (st.comp_size > size) fail(where, "corrupt .npz: member claims " + std::to_string(st.comp_size) + " compressed bytes in a " + std::to_string(size) + "-byte file");
    if (st.comp_method == ZIP_CM_STORE) {
      if (st.size != st.comp_size) fail(where, "corrupt .npz: stored member of " + std::to_string(st.comp_size) + " bytes claims " + std::to_string(st.size));
    } else if (st.comp_method == ZIP_CM_DEFLATE) {
      if (st.size > checked_add(checked_mul(st.comp_size, 1032, where, "the member size"), 64, where, "the member size"))
        fail(where, "corrupt .npz: " + std::to_string(st.comp_size) + " deflated bytes cannot hold the " + std::to_string(st.size) + " bytes declared");
    } else {
      fail(where, "compression method " + std::to_string(st.comp_method) + " is not supported (NumPy writes stored or deflated members)");
    }
    zip_file_t* raw = zip_fopen_index(z.get(), i, 0);
    if (!raw) fail(where, std::string("cannot open member (") + zip_strerror(z.get()) + ")");
    std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> f(raw, zip_fclose);
    auto read_into = [&](uint8_t* dst, zip_uint64_t len) {
      zip_int64_t got = zip_fread(f.get(), dst, len);
      if (got != static_cast<zip_int64_t>(len)) fail(where, std::string("corrupt .npz member (") + zip_file_strerror(f.get()) + ")");
    };
    // Read the .npy header first, and check that the shape it declares is what the member holds.
    std::vector<uint8_t> bytes(static_cast<size_t>(std::min<zip_uint64_t>(st.size, 4096)));
    read_into(bytes.data(), bytes.size());
    if (bytes.size() < st.size) {
      const size_t header_end = npy_header_end(bytes.data(), bytes.size());
      if (header_end > 0 && header_end <= bytes.size()) {
        const NpyHeader h = parse_npy_header(bytes.data(), bytes.size(), where);
        const uint64_t want = checked_add(h.data_offset, checked_tensor_bytes(h.shape, npy_descr_size(h.descr, where), where), where, "the member size");
        if (want != st.size)
          fail(where, "corrupt .npz: the .npy header declares " + shape_str(h.shape) + " '" + h.descr + "' (" + std::to_string(want) +
                          " bytes with the header), the member holds " + std::to_string(st.size));
      } else {
        check_tensor_limit(st.size, where, "the member");
      }
      const size_t head = bytes.size();
      bytes.resize(static_cast<size_t>(st.size));
      read_into(bytes.data() + head, st.size - head);
    }
    out.push_back({name.substr(0, name.size() - 4), parse_npy(bytes.data(), bytes.size(), where)});
  }
  return out;
}

std::vector<NamedArray> read_npz(const std::string& path) {
  std::vector<uint8_t> bytes = read_file(path);
  return parse_npz(bytes.data(), bytes.size(), path);
}

void write_npz(const std::string& path, const std::vector<NamedArray>& arrays, bool compress) {
  atomic_write(path, [&](const std::string& tmp) {
    int code = 0;
    zip_t* z = zip_open(tmp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
    if (!z) fail(path, "cannot create (" + zip_error_text(code) + ")");
    std::vector<std::vector<uint8_t>> buffers;  // must outlive zip_close
    buffers.reserve(arrays.size());
    for (const NamedArray& a : arrays) {
      buffers.push_back(encode_npy(a.array));
      zip_source_t* src = zip_source_buffer(z, buffers.back().data(), buffers.back().size(), 0);
      zip_int64_t idx = src ? zip_file_add(z, (a.name + ".npy").c_str(), src, ZIP_FL_OVERWRITE) : -1;
      if (idx < 0) {
        if (src) zip_source_free(src);
        std::string e = zip_strerror(z);
        zip_discard(z);
        fail(path, "cannot add member " + a.name + " (" + e + ")");
      }
      zip_set_file_compression(z, idx, compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0);
    }
    if (zip_close(z) != 0) {
      std::string e = zip_strerror(z);
      zip_discard(z);
      fail(path, "cannot write (" + e + ")");
    }
  });
}

}  // namespace bs
