// fluxjac — the precision Aoff is held in: float32 as the paper's and FUN3D's kernels store it, bfloat16 (assembled
// by `run` and `bench --aoff-precision bf16`, and by the solve's), or float64 (the CPU reference's values, for the
// host solve only). docs/design.md, "Aoff in bfloat16" and "The solve".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/named_enum.hpp"

namespace fluxjac {

/// The precision Aoff is held in: float32 as assembled by default; bfloat16 (the float32 values rounded to 8
/// significant bits, to the nearest, ties to even; stored as float32, which holds every bfloat16 exactly); or
/// float64 (the CPU reference's values before their rounding to float32; the host solve only, never an assembly).
enum class AoffPrecision { kF64, kF32, kBf16 };
inline constexpr NamedValue<AoffPrecision> kAoffPrecisionNames[] = {
    {AoffPrecision::kF64, "f64"}, {AoffPrecision::kF32, "f32"}, {AoffPrecision::kBf16, "bf16"}};
constexpr const auto& names_of(AoffPrecision) { return kAoffPrecisionNames; }

/// \brief Error(kUsage) for f64, naming `option`: an assembly stores Aoff in f32 or bf16, and f64 exists only for the
/// solve with the CPU reference.
void check_assembly_precision(AoffPrecision precision, const char* option = "--aoff-precision");

/// \brief The assembly precision named `text`, f32 or bf16, for `option`: Error(kUsage) for f64
/// (check_assembly_precision) and for any other name.
AoffPrecision parse_assembly_precision(const std::string& text, const char* option = "--aoff-precision");

/// \brief x rounded to the nearest bfloat16 (8 significant bits, float32's exponent range; ties to even), as a float.
/// The GPU kernels' __float2bfloat16_rn of a float gives the same bits as this of the same float.
float round_to_bf16(double x);

/// \brief Rounds every value to bfloat16 in place (round_to_bf16): what a host variant prepared with bf16 returns.
void round_to_bf16(std::vector<float>& values);

/// \brief The float32 that holds the bfloat16 of these bits exactly: they are its high 16 bits.
float widen_bf16(std::uint16_t bits);

/// \brief The bits of the bfloat16 a float32 holds (one that round_to_bf16 gave or widen_bf16 made): its high 16
/// bits; widen_bf16's inverse.
std::uint16_t bf16_bits(float value);

}  // namespace fluxjac
