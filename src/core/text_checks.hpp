// Checks of user-given text that ends up in file names, scripts and one-line messages.
#pragma once
#include <string_view>

namespace rlm {

/// True when `text` holds a C0 control character (newline, tab, escape, ...) or DEL.
bool has_control_character(std::string_view text);

/// True when `text` is well-formed UTF-8 (no stray continuation bytes, overlong forms, surrogates or code points
/// above U+10FFFF): names that become folder names and JSON strings must be.
bool is_valid_utf8(std::string_view text);

}  // namespace rlm
