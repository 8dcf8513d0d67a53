// Backend options as their plugin describes them (ABI 2.10 option_descs): what a value must be,
// in words for messages and `rocmforge info`, and the check of one value against it.
#pragma once
#include <string>
#include <vector>

#include "rocmforge/abi.h"

namespace rf {

// The plugin's descriptions, copied (pointers into the plugin stay valid while it is loaded);
// empty when it has no option_descs slot or describes nothing. Entries without a key are dropped.
std::vector<rf_option_desc> plugin_option_descs(const rf_backend_vtable *vt);
// The description of `key`, or nullptr.
const rf_option_desc *find_option_desc(const std::vector<rf_option_desc> &descs, const std::string &key);

// "bool", "int", "string", "enum", "string list" ("unknown type N" for a type this host lacks).
std::string option_type_name(int32_t type);
// What a value must be: "true or false", "an integer in 0..1024", "one of auto, copy, map", ...
std::string option_accepts(const rf_option_desc &desc);
// The ENUM choices of "a|b|c", in order.
std::vector<std::string> option_choices(const rf_option_desc &desc);
// Whether the JSON text `value` is a value `desc` accepts (type, INT range, ENUM choice). A type
// this host does not know accepts anything: the plugin checks it.
bool option_value_fits(const rf_option_desc &desc, const std::string &value);

} // namespace rf
