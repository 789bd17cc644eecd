// float16 and bfloat16 elements: stored as their 16 bits, converted to and from float32 the way
// ATen converts (round to nearest, ties to even; NaN stays NaN).
#pragma once

#include <cstdint>
#include <cstring>

namespace etrt {

inline float half_to_float(uint16_t h) noexcept {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1fu) {
    bits = sign | 0x7f800000u | (man << 13);  // infinity or NaN
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else {  // subnormal: normalise the mantissa
    exp = 113;
    while ((man & 0x400u) == 0) {
      man <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((man & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint16_t float_to_half(float f) noexcept {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) return static_cast<uint16_t>(sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // 65520 and up: infinity
  if (x >= 0x38800000u) {  // a normal half: rebias the exponent, round the mantissa to 10 bits
    x += 0xfffu + ((x >> 13) & 1u);
    return static_cast<uint16_t>(sign | ((x - 0x38000000u) >> 13));
  }
  if (x <= 0x33000000u) return sign;  // at most 2^-25: rounds to zero
  // A subnormal half: the 24-bit significand shifted down to units of 2^-24, rounded.
  const uint32_t shift = 126 - (x >> 23);
  const uint32_t man = (x & 0x7fffffu) | 0x800000u;
  uint32_t r = man >> shift;
  const uint32_t rem = man & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (r & 1u) != 0)) ++r;
  return static_cast<uint16_t>(sign | r);
}

inline float bfloat16_to_float(uint16_t b) noexcept {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint16_t float_to_bfloat16(float f) noexcept {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>(((x >> 16) & 0x8000u) | 0x7fc0u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

}  // namespace etrt
