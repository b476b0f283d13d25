#include "jacobian/aoff_precision.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

namespace fluxjac {
namespace {

std::uint32_t bits_of(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

}  // namespace

void check_assembly_precision(AoffPrecision precision, const char* option) {
  if (precision == AoffPrecision::kF64)
    fail(ExitCode::kUsage,
         "{} f64: an assembly stores Aoff in f32 or bf16; f64 exists only for the solve with the CPU reference "
         "(fluxjac solve --variant reference --aoff-precision f64)",
         option);
}

AoffPrecision parse_assembly_precision(const std::string& text, const char* option) {
  const std::optional<AoffPrecision> precision = find_named<AoffPrecision>(text);
  if (!precision) fail(ExitCode::kUsage, "{} {}: use f32 or bf16", option, text);
  check_assembly_precision(*precision, option);
  return *precision;
}

float round_to_bf16(double x) {
  if (!std::isfinite(x) || x == 0.0) return static_cast<float>(x);
  // 8 significant bits: a multiple of 2^(e - 7) for |x| in [2^e, 2^(e + 1)); below float32's normal range, of 2^-133.
  const int exponent = std::max(std::ilogb(x), -126);
  const double step = std::ldexp(1.0, exponent - 7);
  const double rounded = std::nearbyint(x / step) * step;  // x / step is exact; nearbyint rounds ties to even
  return static_cast<float>(rounded);                      // exact: a bfloat16 is a float32 (or overflows to inf)
}

void round_to_bf16(std::vector<float>& values) {
  for (float& value : values)  // a float whose low 16 bits are zero is a bfloat16 already, its own rounding
    if ((bits_of(value) & 0xffffu) != 0) value = round_to_bf16(static_cast<double>(value));
}

std::uint16_t bf16_bits(float value) { return static_cast<std::uint16_t>(bits_of(value) >> 16); }

float widen_bf16(std::uint16_t bits) {
  const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

}  // namespace fluxjac
