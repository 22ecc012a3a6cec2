// A small, strict unpickler for what NumPy writes when it saves a dict of lists of arrays (np.save of a
// dict: bvlc_alexnet.npy), pickle protocols 2 to 5 and Python 2's. It understands containers, strings,
// numbers, and exactly the globals NumPy needs to rebuild arrays: numpy ndarray / _reconstruct /
// _frombuffer, dtype, scalar, and _codecs.encode. Anything else is refused with an error that names the
// offending global or opcode: a weights file must never be able to run code.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "weights_tools/array.hpp"

namespace bs {

struct PyValue;
using PyPtr = PyValue*;  // owned by the Pickle's arena: cycles and deep nesting cost nothing to free

struct PyValue {
  enum class Kind { none, boolean, integer, floating, str, bytes, tuple, list, dict, global, ndarray, dtype };
  Kind kind = Kind::none;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;                                // str (UTF-8), bytes, or a dtype's code ("f4", "O8")
  std::vector<PyPtr> items;                     // tuple, list; an object array's elements
  std::vector<std::pair<PyPtr, PyPtr>> entries;  // dict, in insertion order
  std::string module, name;                     // global
  char byteorder = '=';                         // dtype
  Array array;                                  // ndarray with a numeric dtype (C order, native bytes)
  bool object_array = false;                    // ndarray of Python objects: see items

  std::string repr() const;  // short description for error messages
};

// An unpickled object graph: every value lives in `arena` (built by one pass, freed at once); `root` is what
// STOP returned.
struct Pickle {
  std::unique_ptr<std::deque<PyValue>> arena;
  PyPtr root = nullptr;
};

// Unpickles `size` bytes; `where` names the file in errors. The arrays it rebuilds may hold at most twice the
// pickle's size in all (a pickle that references one buffer many times cannot make it allocate more).
Pickle unpickle(const uint8_t* data, size_t size, const std::string& where);

// Writes a dict {key: [array, ...]} of float32 arrays as Python 2's pickle protocol 2 does (the format of
// bvlc_alexnet.npy): str keys and array bytes as BINSTRING, arrays via numpy.core.multiarray._reconstruct.
std::vector<uint8_t> pickle_dict_of_arrays(const std::vector<std::pair<std::string, std::vector<Array>>>& entries);

}  // namespace bs
