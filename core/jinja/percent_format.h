// Python's printf-style formatting (`fmt % args`, jinja2's `format` filter): %s %r %d %i %u %f
// %F %e %E %g %G %x %X %o %c %%, with (name) keys, flags, width and precision.
#pragma once
#include <string>
#include <vector>

#include "rocmforge/jinja.h"

namespace rf::jinja {

// `mapping` (a dict, for %(name)s) may be null. Throws TemplateError (Runtime) for a bad
// format or the wrong number of arguments, as Python's TypeError / ValueError, and (Limit) when
// the text would pass max_bytes.
std::string percent_format(const std::string &fmt, const std::vector<Value> &args, const Value *mapping, size_t max_bytes);

} // namespace rf::jinja
