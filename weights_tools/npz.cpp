#include "weights_tools/npz.hpp"

#include <zip.h>

#include <memory>

#include "weights_tools/error.hpp"
#include "weights_tools/io.hpp"
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

std::vector<NamedArray> read_npz(const std::string& path) {
  int code = 0;
  std::unique_ptr<zip_t, ZipCloser> z(zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code));
  if (!z) fail(path, "cannot open as .npz (" + zip_error_text(code) + ")");
  const zip_int64_t n = zip_get_num_entries(z.get(), 0);
  std::vector<NamedArray> out;
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    if (zip_stat_index(z.get(), i, 0, &st) != 0) fail(path, "corrupt .npz: cannot stat member " + std::to_string(i));
    std::string name = st.name;
    const std::string where = path + ":" + name;
    if (name.size() < 4 || name.compare(name.size() - 4, 4, ".npy") != 0)
      fail(where, "member is not a .npy file");
    zip_file_t* f = zip_fopen_index(z.get(), i, 0);
    if (!f) fail(where, std::string("cannot open member (") + zip_strerror(z.get()) + ")");
    std::vector<uint8_t> bytes(static_cast<size_t>(st.size));
    zip_int64_t got = zip_fread(f, bytes.data(), st.size);
    std::string ferr = zip_file_strerror(f);
    zip_fclose(f);
    if (got != static_cast<zip_int64_t>(st.size)) fail(where, "corrupt .npz member (" + ferr + ")");
    out.push_back({name.substr(0, name.size() - 4), parse_npy(bytes.data(), bytes.size(), where)});
  }
  return out;
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
