// Python's str.format: {} / {0} / {name} fields with .attr and [key] lookups, !r / !s / !a and
// the format-spec mini-language ([[fill]align][sign][#][0][width][,][.precision][type]).
#pragma once
#include <string>

#include "rocmforge/jinja.h"

namespace rf::jinja {

class Interpreter;

// Throws TemplateError (Runtime) as Python raises ValueError / KeyError / IndexError.
std::string str_format(Interpreter &in, const std::string &fmt, const CallArgs &args);

} // namespace rf::jinja
