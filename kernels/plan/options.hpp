// The typed run options every subcommand shares. Each choice a user makes by name (--backend cuda, --precision fp16,
// --transfers overlapped, ...) is an enumeration, parsed once where the command line is read (app/cli/) and passed
// on as this type; nothing after parsing compares option values as strings. EnumTable<E> holds each enumeration's
// spellings, in the order `--help` and the error messages list them.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace bs {

enum class BackendKind { cpu_ref, cpu, cuda, cudnn };
enum class Precision { fp32, tf32, fp16, bf16 };
enum class InputPrecision { fp32, u8, fp16, bf16 };
enum class WeightFormat { native, int8 };
enum class Transfers { resident, per_layer, overlapped };
enum class HostMemory { pageable, pinned };
enum class Copies { engine, kernel };
enum class CudnnAlgos { fastest, exact };
enum class ProfiledPasses { automatic, separate, timed };

// Each enumeration's name in messages and its spellings, found by overload on the enumeration (spellings(E{})).
template <class E, size_t N>
struct Spellings {
  const char* what;
  std::array<std::pair<std::string_view, E>, N> items;
};
constexpr auto spellings(BackendKind) {
  using enum BackendKind;
  return Spellings<BackendKind, 4>{"backend", {{{"cpu-ref", cpu_ref}, {"cpu", cpu}, {"cuda", cuda}, {"cudnn", cudnn}}}};
}
constexpr auto spellings(Precision) {
  using enum Precision;
  return Spellings<Precision, 4>{"precision", {{{"fp32", fp32}, {"tf32", tf32}, {"fp16", fp16}, {"bf16", bf16}}}};
}
constexpr auto spellings(InputPrecision) {
  using enum InputPrecision;
  return Spellings<InputPrecision, 4>{"input precision", {{{"fp32", fp32}, {"u8", u8}, {"fp16", fp16}, {"bf16", bf16}}}};
}
constexpr auto spellings(WeightFormat) {
  return Spellings<WeightFormat, 2>{"weight format", {{{"native", WeightFormat::native}, {"int8", WeightFormat::int8}}}};
}
constexpr auto spellings(Transfers) {
  using enum Transfers;
  return Spellings<Transfers, 3>{"transfer mode", {{{"resident", resident}, {"per-layer", per_layer}, {"overlapped", overlapped}}}};
}
constexpr auto spellings(HostMemory) {
  return Spellings<HostMemory, 2>{"host memory", {{{"pageable", HostMemory::pageable}, {"pinned", HostMemory::pinned}}}};
}
constexpr auto spellings(Copies) {
  return Spellings<Copies, 2>{"copy mode", {{{"engine", Copies::engine}, {"kernel", Copies::kernel}}}};
}
constexpr auto spellings(CudnnAlgos) {
  return Spellings<CudnnAlgos, 2>{"cuDNN algorithm policy", {{{"fastest", CudnnAlgos::fastest}, {"exact", CudnnAlgos::exact}}}};
}
constexpr auto spellings(ProfiledPasses) {
  using enum ProfiledPasses;
  return Spellings<ProfiledPasses, 3>{"profiled-pass mode", {{{"auto", automatic}, {"separate", separate}, {"timed", timed}}}};
}
template <class E>
struct EnumTable {
  static constexpr auto table = spellings(E{});
  static constexpr const char* what = table.what;
  static constexpr auto items = table.items;
};

// The spelling of a value ("per-layer"), as flags take it and results record it.
template <class E>
std::string name_of(E e) {
  for (const auto& [n, v] : EnumTable<E>::items)
    if (v == e) return std::string(n);
  return "?";
}
template <class E>
std::optional<E> enum_from(std::string_view text) {
  for (const auto& [n, v] : EnumTable<E>::items)
    if (n == text) return v;
  return std::nullopt;
}
// "resident, per-layer or overlapped" (sep " | " gives the --help form "resident | per-layer | overlapped").
template <class E>
std::string enum_choices(const char* sep = nullptr) {
  std::string s;
  const size_t n = EnumTable<E>::items.size();
  for (size_t i = 0; i < n; ++i) {
    if (i) s += sep ? sep : (i + 1 == n ? " or " : ", ");
    s += EnumTable<E>::items[i].first;
  }
  return s;
}
// The one error line for a spelling that is none of E's: "unknown transfer mode 'async' (expected resident,
// per-layer or overlapped)"; empty when `text` is one.
template <class E>
std::string enum_error(std::string_view text) {
  if (enum_from<E>(text)) return "";
  return std::string("unknown ") + EnumTable<E>::what + " '" + std::string(text) + "' (expected " + enum_choices<E>() + ")";
}
// Parses or fails naming the flag (bs::Error): for values that come from files and tests rather than the command line.
template <class E>
E parse_enum(std::string_view text, const std::string& flag);

// The backends that run on an NVIDIA GPU.
inline bool is_gpu(BackendKind b) { return b == BackendKind::cuda || b == BackendKind::cudnn; }
// --precision: fp16 and bf16 keep 16-bit NHWC activations between layers.
inline bool is_half(Precision p) { return p == Precision::fp16 || p == Precision::bf16; }
// What a result in each precision must agree with the reference to (relative L2 of the logits, end to end).
double precision_tolerance(Precision p);
// --input-precision: bytes per input value on the host and in the copy: 4, 2 (fp16, bf16) or 1 (u8).
size_t input_value_bytes(InputPrecision p);
// --input-precision fp16 | bf16 need the same --precision (the copy is in the type the first layer computes in); u8 goes
// with any. Fails naming --input-precision otherwise.
void check_input_precision(InputPrecision input, Precision precision);

}  // namespace bs
