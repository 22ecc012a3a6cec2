#include "weights_tools/unpickle.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "weights_tools/error.hpp"
#include "weights_tools/limits.hpp"

namespace bs {
namespace {

using Kind = PyValue::Kind;


const std::set<std::string> kAllowedGlobals = {
    "numpy.core.multiarray._reconstruct", "numpy._core.multiarray._reconstruct", "numpy.ndarray", "numpy.dtype",
    "numpy.core.multiarray.scalar",      "numpy._core.multiarray.scalar",      "numpy.core.numeric._frombuffer",
    "numpy._core.numeric._frombuffer",   "_codecs.encode"};

// UTF-8 -> code points, for _codecs.encode(str, 'latin1') (how Python 3 pickles bytes at protocol 2).
std::string latin1_from_utf8(const std::string& u, const std::string& where) {
  std::string out;
  for (size_t i = 0; i < u.size();) {
    unsigned char c = u[i];
    uint32_t cp;
    if (c < 0x80) { cp = c; i += 1; }
    else if ((c & 0xe0) == 0xc0 && i + 1 < u.size()) { cp = (c & 0x1fu) << 6 | (u[i + 1] & 0x3fu); i += 2; }
    else fail(where, "corrupt pickle: a latin1 byte string holds characters above U+00FF");
    if (cp > 0xff) fail(where, "corrupt pickle: a latin1 byte string holds characters above U+00FF");
    out += static_cast<char>(cp);
  }
  return out;
}

class Unpickler {
 public:
  Unpickler(const uint8_t* d, size_t n, const std::string& where)
      : d_(d), n_(n), where_(where), arena_(std::make_unique<std::deque<PyValue>>()), budget_(2 * uint64_t{n} + 4096) {}

  Pickle run() {
    while (true) {
      if (pos_ >= n_) bad("truncated pickle (no STOP opcode)");
      const size_t at = pos_;
      const uint8_t op = d_[pos_++];
      switch (op) {
        case 0x80: proto_ = u8(); if (proto_ > 5) bad("unsupported pickle protocol " + std::to_string(proto_)); break;
        case 0x95: take(8); break;  // FRAME: a length hint
        case '.': {                   // STOP
          if (stack_.size() != 1) bad("corrupt pickle: STOP with " + std::to_string(stack_.size()) + " objects on the stack");
          return Pickle{std::move(arena_), stack_.back()};
        }
        case '(': marks_.push_back(stack_.size()); break;
        case ')': push(make(Kind::tuple)); break;
        case ']': push(make(Kind::list)); break;
        case '}': push(make(Kind::dict)); break;
        case 't': { auto t = make(Kind::tuple); t->items = pop_mark(); push(t); break; }
        case 0x85: case 0x86: case 0x87: {
          auto t = make(Kind::tuple);
          const size_t k = op - 0x84;
          need_stack(k);
          t->items.assign(stack_.end() - k, stack_.end());
          stack_.resize(stack_.size() - k);
          push(t);
          break;
        }
        case 'l': { auto l = make(Kind::list); l->items = pop_mark(); push(l); break; }
        case 'd': {
          auto d = make(Kind::dict);
          auto items = pop_mark();
          if (items.size() % 2) bad("corrupt pickle: DICT with an odd number of items");
          for (size_t i = 0; i < items.size(); i += 2) d->entries.emplace_back(items[i], items[i + 1]);
          push(d);
          break;
        }
        case 'a': { auto v = pop(); list_top()->items.push_back(v); break; }
        case 'e': { auto items = pop_mark(); auto& l = list_top()->items; l.insert(l.end(), items.begin(), items.end()); break; }
        case 's': { auto v = pop(); auto k = pop(); dict_top()->entries.emplace_back(k, v); break; }
        case 'u': {
          auto items = pop_mark();
          if (items.size() % 2) bad("corrupt pickle: SETITEMS with an odd number of items");
          auto d = dict_top();
          for (size_t i = 0; i < items.size(); i += 2) d->entries.emplace_back(items[i], items[i + 1]);
          break;
        }
        case 'q': memo_[u8()] = top(); break;
        case 'r': memo_[u32()] = top(); break;
        case 0x94: memo_[static_cast<uint32_t>(memo_.size())] = top(); break;
        case 'h': push(get(u8())); break;
        case 'j': push(get(u32())); break;
        case 'N': push(make(Kind::none)); break;
        case 0x88: case 0x89: { auto b = make(Kind::boolean); b->b = op == 0x88; push(b); break; }
        case 'K': push_int(u8()); break;
        case 'M': { uint32_t v = u8(); v |= static_cast<uint32_t>(u8()) << 8; push_int(v); break; }
        case 'J': push_int(static_cast<int32_t>(u32())); break;
        case 0x8a: {  // LONG1: little-endian two's complement
          const size_t k = u8();
          if (k > 8) bad("integer too large (" + std::to_string(k) + " bytes)");
          const uint8_t* p = take(k);
          uint64_t v = 0;
          for (size_t i = 0; i < k; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
          if (k > 0 && k < 8 && (p[k - 1] & 0x80)) v |= ~uint64_t{0} << (8 * k);
          push_int(static_cast<int64_t>(v));
          break;
        }
        case 'G': {
          const uint8_t* p = take(8);
          uint64_t bits = 0;
          for (int i = 0; i < 8; ++i) bits = bits << 8 | p[i];
          auto f = make(Kind::floating);
          std::memcpy(&f->f, &bits, 8);
          push(f);
          break;
        }
        case 'X': push_string(Kind::str, u32()); break;
        case 0x8c: push_string(Kind::str, u8()); break;
        case 0x8d: push_string(Kind::str, u64()); break;
        case 'T': push_string(Kind::bytes, u32()); break;  // Python 2 str: bytes
        case 'U': push_string(Kind::bytes, u8()); break;
        case 'B': push_string(Kind::bytes, u32()); break;
        case 'C': push_string(Kind::bytes, u8()); break;
        case 0x8e: case 0x96: push_string(Kind::bytes, u64()); break;  // BINBYTES8, BYTEARRAY8
        case 'c': {
          std::string module = line(), name = line();
          push_global(module, name);
          break;
        }
        case 0x93: {
          auto name = pop(), module = pop();
          if (module->kind != Kind::str || name->kind != Kind::str) bad("corrupt pickle: STACK_GLOBAL without names");
          push_global(module->s, name->s);
          break;
        }
        case 'R': { auto args = pop(); auto fn = pop(); push(reduce(fn, args)); break; }
        case 'b': { auto state = pop(); build(top(), state); break; }
        case '0': pop(); break;
        default: {
          char buf[80];
          std::snprintf(buf, sizeof buf, "unsupported pickle opcode 0x%02x at offset %zu", op, at);
          bad(buf);
        }
      }
    }
  }

 private:
  [[noreturn]] void bad(const std::string& what) const { fail(where_, what); }
  PyPtr make(Kind k) {
    arena_->emplace_back();
    arena_->back().kind = k;
    return &arena_->back();
  }
  // Counts bytes materialised beyond the input (arrays, decoded byte strings) against the budget.
  void spend(uint64_t bytes) {
    if (bytes > budget_)
      bad("corrupt pickle: it would rebuild more than " + std::to_string(2 * uint64_t{n_} + 4096) +
          " bytes of arrays from " + std::to_string(n_) + " bytes (a buffer referenced many times?)");
    budget_ -= bytes;
  }
  const uint8_t* take(size_t k) {
    if (n_ - pos_ < k) bad("truncated pickle at offset " + std::to_string(pos_));
    const uint8_t* p = d_ + pos_;
    pos_ += k;
    return p;
  }
  uint8_t u8() { return *take(1); }
  uint32_t u32() { const uint8_t* p = take(4); return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24; }
  uint64_t u64() {
    const uint8_t* p = take(8);
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
    return v;
  }
  std::string line() {
    std::string s;
    while (true) {
      char c = static_cast<char>(u8());
      if (c == '\n') return s;
      s += c;
      if (s.size() > 256) bad("corrupt pickle: global name too long");
    }
  }
  void push(PyPtr v) {
    if (stack_.size() > 100000) bad("corrupt pickle: stack too deep");
    stack_.push_back(std::move(v));
  }
  void need_stack(size_t k) const {
    const size_t floor = marks_.empty() ? 0 : marks_.back();
    if (stack_.size() < floor + k) bad("corrupt pickle: stack underflow at offset " + std::to_string(pos_ - 1));
  }
  PyPtr pop() {
    need_stack(1);
    PyPtr v = stack_.back();
    stack_.pop_back();
    return v;
  }
  PyPtr top() {
    need_stack(1);
    return stack_.back();
  }
  std::vector<PyPtr> pop_mark() {
    if (marks_.empty()) bad("corrupt pickle: no MARK before offset " + std::to_string(pos_ - 1));
    const size_t m = marks_.back();
    marks_.pop_back();
    std::vector<PyPtr> items(stack_.begin() + m, stack_.end());
    stack_.resize(m);
    return items;
  }
  PyPtr list_top() {
    PyPtr l = top();
    if (l->kind != Kind::list) bad("corrupt pickle: APPEND to a " + l->repr());
    return l;
  }
  PyPtr dict_top() {
    PyPtr d = top();
    if (d->kind != Kind::dict) bad("corrupt pickle: SETITEM on a " + d->repr());
    return d;
  }
  PyPtr get(uint32_t k) {
    auto it = memo_.find(k);
    if (it == memo_.end()) bad("corrupt pickle: memo key " + std::to_string(k) + " was never stored");
    return it->second;
  }
  void push_int(int64_t v) { auto p = make(Kind::integer); p->i = v; push(p); }
  void push_string(Kind k, uint64_t len) {
    if (len > n_) bad("truncated pickle: a string of " + std::to_string(len) + " bytes at offset " + std::to_string(pos_));
    const uint8_t* p = take(static_cast<size_t>(len));
    auto s = make(k);
    s->s.assign(reinterpret_cast<const char*>(p), static_cast<size_t>(len));
    push(s);
  }
  void push_global(const std::string& module, const std::string& name) {
    const std::string full = module + "." + name;
    if (!kAllowedGlobals.count(full))
      bad("pickle references " + full + ", which a weights file may not use (allowed: numpy array and dtype "
          "reconstruction, numpy scalars, _codecs.encode)");
    auto g = make(Kind::global);
    g->module = module;
    g->name = name;
    push(g);
  }

  static int64_t as_int(const PyPtr& v, const Unpickler& u, const char* what) {
    if (v->kind != Kind::integer) u.bad(std::string("corrupt pickle: ") + what + " is a " + v->repr());
    return v->i;
  }
  std::string as_bytes(const PyPtr& v, const char* what) {
    if (v->kind == Kind::bytes) return v->s;
    if (v->kind == Kind::str) {  // Python 2 str loaded as latin1
      spend(v->s.size());
      return latin1_from_utf8(v->s, where_);
    }
    bad(std::string("corrupt pickle: ") + what + " is a " + v->repr());
  }

  static DType numeric_dtype(const std::string& code, const Unpickler& u) {
    if (code == "f4") return DType::f32;
    if (code == "f8") return DType::f64;
    if (code == "f2") return DType::f16;
    if (code == "i4") return DType::i32;
    if (code == "i8") return DType::i64;
    if (code == "u1") return DType::u8;
    u.bad("unsupported array dtype '" + code + "' in the pickle");
  }

  // Fills an ndarray from raw bytes of dtype `dt`, honouring byte order and Fortran order.
  void fill_array(PyValue& arr, const PyValue& dt, std::vector<int64_t> shape, const std::string& raw, bool fortran) {
    arr.array.dtype = numeric_dtype(dt.s, *this);
    arr.array.shape = std::move(shape);
    const size_t es = dtype_size(arr.array.dtype);
    const size_t bytes = checked_tensor_bytes(arr.array.shape, es, where_ + ": array " + shape_str(arr.array.shape));
    if (raw.size() != bytes)
      bad("corrupt pickle: array " + shape_str(arr.array.shape) + " " + dtype_name(arr.array.dtype) + " needs " +
          std::to_string(bytes) + " bytes, has " + std::to_string(raw.size()));
    spend(bytes);
    arr.array.bytes.assign(raw.begin(), raw.end());
    if (dt.byteorder == '>' && es > 1)
      for (size_t i = 0; i < bytes; i += es) std::reverse(arr.array.bytes.begin() + i, arr.array.bytes.begin() + i + es);
    if (fortran) arr.array.bytes = fortran_to_c_order(arr.array.bytes, arr.array.shape, es);
  }

  std::vector<int64_t> shape_of(const PyPtr& t) const {
    if (t->kind != Kind::tuple) bad("corrupt pickle: an array shape is a " + t->repr());
    if (t->items.size() > static_cast<size_t>(kMaxNdim)) bad("corrupt pickle: an array shape of " + std::to_string(t->items.size()) + " dimensions");
    std::vector<int64_t> s;
    for (const PyPtr& d : t->items) {
      int64_t v = as_int(d, *this, "an array dimension");
      if (v < 0 || v > kMaxDimension) bad("corrupt pickle: array dimension " + std::to_string(v));
      s.push_back(v);
    }
    return s;
  }

  PyPtr reduce(const PyPtr& fn, const PyPtr& args) {
    if (fn->kind != Kind::global) bad("corrupt pickle: REDUCE on a " + fn->repr());
    if (args->kind != Kind::tuple) bad("corrupt pickle: REDUCE arguments are a " + args->repr());
    const auto& a = args->items;
    const std::string& name = fn->name;
    if (name == "_reconstruct") {  // (ndarray, (0,), b'b'): an empty array, filled by BUILD
      if (a.empty() || a[0]->kind != Kind::global || a[0]->name != "ndarray") bad("corrupt pickle: _reconstruct of something other than ndarray");
      return make(Kind::ndarray);
    }
    if (name == "dtype") {  // ('f4', False, True)
      if (a.empty() || (a[0]->kind != Kind::str && a[0]->kind != Kind::bytes)) bad("corrupt pickle: dtype without a type code");
      auto d = make(Kind::dtype);
      d->s = a[0]->s;
      return d;
    }
    if (name == "encode") {  // _codecs.encode(str, 'latin1')
      if (a.size() != 2 || a[0]->kind != Kind::str || a[1]->kind != Kind::str || (a[1]->s != "latin1" && a[1]->s != "latin-1"))
        bad("corrupt pickle: _codecs.encode is allowed only as encode(str, 'latin1')");
      auto b = make(Kind::bytes);
      spend(a[0]->s.size());
      b->s = latin1_from_utf8(a[0]->s, where_);
      return b;
    }
    if (name == "_frombuffer") {  // (buffer, dtype, shape, order)
      if (a.size() != 4 || a[1]->kind != Kind::dtype || (a[3]->kind != Kind::str && a[3]->kind != Kind::bytes))
        bad("corrupt pickle: bad _frombuffer arguments");
      auto arr = make(Kind::ndarray);
      fill_array(*arr, *a[1], shape_of(a[2]), as_bytes(a[0], "a buffer"), a[3]->s == "F");
      return arr;
    }
    if (name == "scalar") {  // (dtype, bytes): a 0-d array of that dtype
      if (a.size() != 2 || a[0]->kind != Kind::dtype) bad("corrupt pickle: bad scalar arguments");
      auto arr = make(Kind::ndarray);
      fill_array(*arr, *a[0], {}, as_bytes(a[1], "scalar data"), false);
      return arr;
    }
    bad("corrupt pickle: " + fn->module + "." + name + " cannot be called");
  }

  void build(const PyPtr& obj, const PyPtr& state) {
    if (state->kind != Kind::tuple) bad("corrupt pickle: BUILD state is a " + state->repr());
    const auto& s = state->items;
    if (obj->kind == Kind::dtype) {  // (3, '<', None, None, None, -1, -1, flags)
      if (s.size() >= 2 && (s[1]->kind == Kind::str || s[1]->kind == Kind::bytes) && !s[1]->s.empty()) obj->byteorder = s[1]->s[0];
      return;
    }
    if (obj->kind != Kind::ndarray) bad("corrupt pickle: BUILD on a " + obj->repr());
    // (version, shape, dtype, is_fortran, data)
    if (s.size() != 5 || s[2]->kind != Kind::dtype) bad("corrupt pickle: unexpected ndarray state");
    const PyValue& dt = *s[2];
    const bool fortran = s[3]->kind == Kind::boolean ? s[3]->b : as_int(s[3], *this, "is_fortran") != 0;
    if (dt.s.rfind("O", 0) == 0) {  // object array: data is a list of objects
      if (s[4]->kind != Kind::list) bad("corrupt pickle: object array data is a " + s[4]->repr());
      obj->object_array = true;
      obj->array.shape = shape_of(s[1]);
      obj->items = s[4]->items;
      return;
    }
    fill_array(*obj, dt, shape_of(s[1]), as_bytes(s[4], "array data"), fortran);
  }

  const uint8_t* d_;
  size_t n_, pos_ = 0;
  std::string where_;
  std::unique_ptr<std::deque<PyValue>> arena_;
  uint64_t budget_;
  int proto_ = 0;
  std::vector<PyPtr> stack_;
  std::vector<size_t> marks_;
  std::map<uint32_t, PyPtr> memo_;
};

}  // namespace

std::string PyValue::repr() const {
  switch (kind) {
    case Kind::none: return "None";
    case Kind::boolean: return "bool";
    case Kind::integer: return "int";
    case Kind::floating: return "float";
    case Kind::str: return "str '" + s.substr(0, 32) + "'";
    case Kind::bytes: return "bytes";
    case Kind::tuple: return "tuple";
    case Kind::list: return "list";
    case Kind::dict: return "dict";
    case Kind::global: return module + "." + name;
    case Kind::ndarray: return object_array ? "object array" : "array " + shape_str(array.shape);
    case Kind::dtype: return "dtype " + s;
  }
  return "?";
}

Pickle unpickle(const uint8_t* data, size_t size, const std::string& where) { return Unpickler(data, size, where).run(); }

namespace {
struct Pickler {
  std::vector<uint8_t> out;
  void op(uint8_t c) { out.push_back(c); }
  void raw(const std::string& s) { out.insert(out.end(), s.begin(), s.end()); }
  void u32(uint32_t v) { for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i))); }
  void binstring(const std::string& s) {  // Python 2 str
    if (s.size() < 256) { op('U'); op(static_cast<uint8_t>(s.size())); }
    else { op('T'); u32(static_cast<uint32_t>(s.size())); }
    raw(s);
  }
  void integer(int64_t v) {
    if (v >= 0 && v < 256) { op('K'); op(static_cast<uint8_t>(v)); }
    else { op('J'); u32(static_cast<uint32_t>(static_cast<int32_t>(v))); }
  }
  void global(const std::string& module, const std::string& name) { op('c'); raw(module + "\n" + name + "\n"); }
  void dtype_f4() {  // numpy.dtype('f4', False, True) with state (3, '<', None, None, None, -1, -1, 0)
    global("numpy", "dtype");
    binstring("f4"); op(0x89); op(0x88); op(0x87); op('R');
    op('('); integer(3); binstring("<"); op('N'); op('N'); op('N'); integer(-1); integer(-1); integer(0); op('t'); op('b');
  }
  void array(const Array& a) {
    global("numpy.core.multiarray", "_reconstruct");
    global("numpy", "ndarray");
    integer(0); op(0x85); binstring("b"); op(0x87); op('R');
    op('('); integer(1);
    op('(');
    for (int64_t d : a.shape) integer(d);
    op('t');
    dtype_f4();
    op(0x89);  // not Fortran
    binstring(std::string(a.bytes.begin(), a.bytes.end()));
    op('t'); op('b');
  }
};
}  // namespace

std::vector<uint8_t> pickle_dict_of_arrays(const std::vector<std::pair<std::string, std::vector<Array>>>& entries) {
  Pickler p;
  p.op(0x80); p.op(2);
  // np.save(dict) pickles a 0-d object array whose one element is the dict.
  p.global("numpy.core.multiarray", "_reconstruct");
  p.global("numpy", "ndarray");
  p.integer(0); p.op(0x85); p.binstring("b"); p.op(0x87); p.op('R');
  p.op('('); p.integer(1); p.op(')');
  p.global("numpy", "dtype"); p.binstring("O8"); p.op(0x89); p.op(0x88); p.op(0x87); p.op('R');
  p.op('('); p.integer(3); p.binstring("|"); p.op('N'); p.op('N'); p.op('N'); p.integer(-1); p.integer(-1); p.integer(63); p.op('t'); p.op('b');
  p.op(0x89);
  p.op(']');
  p.op('}');
  for (const auto& [key, arrays] : entries) {
    p.binstring(key);
    p.op(']');
    p.op('(');
    for (const Array& a : arrays) {
      if (a.dtype != DType::f32) fail("pickle writer", "only float32 arrays are written");
      p.array(a);
    }
    p.op('e');
    p.op('s');
  }
  p.op('a');
  p.op('t');
  p.op('b');
  p.op('.');
  return p.out;
}

}  // namespace bs
