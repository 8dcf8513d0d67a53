// Tokens -> the node tree, with jinja2's operator precedence (or < and < not < comparisons <
// + - < ~ < * / // % < ** < unary minus < filters, tests, calls, attributes and subscripts).
#pragma once
#include <string_view>

#include "ast.h"

namespace rf::jinja {

// The template as a Body node. Throws TemplateError (Syntax) with line and column.
NodePtr parse_template(std::string_view source);

} // namespace rf::jinja
