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
enum class Transfers { resident, per_layer, overlapped };
enum class HostMemory { pageable, pinned };
enum class CudnnAlgos { fastest, exact };
enum class ProfiledPasses { automatic, separate, timed };

template <class E>
struct EnumTable;
template <>
struct EnumTable<BackendKind> {
  static constexpr const char* what = "backend";
  static constexpr std::array<std::pair<std::string_view, BackendKind>, 4> items{
      {{"cpu-ref", BackendKind::cpu_ref}, {"cpu", BackendKind::cpu}, {"cuda", BackendKind::cuda}, {"cudnn", BackendKind::cudnn}}};
};
template <>
struct EnumTable<Precision> {
  static constexpr const char* what = "precision";
  static constexpr std::array<std::pair<std::string_view, Precision>, 4> items{
      {{"fp32", Precision::fp32}, {"tf32", Precision::tf32}, {"fp16", Precision::fp16}, {"bf16", Precision::bf16}}};
};
template <>
struct EnumTable<InputPrecision> {
  static constexpr const char* what = "input precision";
  static constexpr std::array<std::pair<std::string_view, InputPrecision>, 4> items{
      {{"fp32", InputPrecision::fp32}, {"u8", InputPrecision::u8}, {"fp16", InputPrecision::fp16}, {"bf16", InputPrecision::bf16}}};
};
template <>
struct EnumTable<Transfers> {
  static constexpr const char* what = "transfer mode";
  static constexpr std::array<std::pair<std::string_view, Transfers>, 3> items{
      {{"resident", Transfers::resident}, {"per-layer", Transfers::per_layer}, {"overlapped", Transfers::overlapped}}};
};
template <>
struct EnumTable<HostMemory> {
  static constexpr const char* what = "host memory";
  static constexpr std::array<std::pair<std::string_view, HostMemory>, 2> items{
      {{"pageable", HostMemory::pageable}, {"pinned", HostMemory::pinned}}};
};
template <>
struct EnumTable<CudnnAlgos> {
  static constexpr const char* what = "cuDNN algorithm policy";
  static constexpr std::array<std::pair<std::string_view, CudnnAlgos>, 2> items{
      {{"fastest", CudnnAlgos::fastest}, {"exact", CudnnAlgos::exact}}};
};
template <>
struct EnumTable<ProfiledPasses> {
  static constexpr const char* what = "profiled-pass mode";
  static constexpr std::array<std::pair<std::string_view, ProfiledPasses>, 3> items{
      {{"auto", ProfiledPasses::automatic}, {"separate", ProfiledPasses::separate}, {"timed", ProfiledPasses::timed}}};
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
