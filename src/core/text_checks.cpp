#include "core/text_checks.hpp"

#include <algorithm>
#include <cstdint>

namespace rlm {

bool has_control_character(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

bool is_valid_utf8(std::string_view text) {
  // The well-formed byte sequences of the Unicode Standard, Table 3-7.
  size_t i = 0;
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  while (i < text.size()) {
    const uint8_t b0 = byte(i);
    if (b0 < 0x80) {
      ++i;
      continue;
    }
    size_t length = 0;
    uint8_t low = 0x80, high = 0xbf;  // the allowed range of the second byte
    if (b0 >= 0xc2 && b0 <= 0xdf) {
      length = 2;
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
      length = 3;
      if (b0 == 0xe0) low = 0xa0;   // no overlong forms
      if (b0 == 0xed) high = 0x9f;  // no UTF-16 surrogates
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
      length = 4;
      if (b0 == 0xf0) low = 0x90;   // no overlong forms
      if (b0 == 0xf4) high = 0x8f;  // nothing above U+10FFFF
    } else {
      return false;
    }
    if (i + length > text.size()) return false;
    if (byte(i + 1) < low || byte(i + 1) > high) return false;
    for (size_t k = 2; k < length; ++k)
      if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return false;
    i += length;
  }
  return true;
}

}  // namespace rlm
