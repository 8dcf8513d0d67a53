// Nesting depth of JSON text. RapidJSON's writer (and the recursive parser the plugins use on
// the objects the config hands them) recurses once per level, so a config nested a million
// levels deep would overflow the stack after an iterative parse accepted it.
#pragma once
#include <cstddef>
#include <string_view>

namespace rf {

// Deepest array/object nesting of `valid_json` (0 for a scalar). Exact for text that parsed.
size_t json_nesting_depth(std::string_view valid_json);

} // namespace rf
