// Template::parse / render: the parse also checks every filter and test name, so a template
// naming one we lack is refused when it is loaded, as jinja2 refuses it at compile time.
#include "interpreter.h"
#include "parser.h"

namespace rf::jinja {
namespace {

void check_names(const Node &n) {
    if (n.kind == Node::Kind::Filter && !is_filter(n.name))
        throw TemplateError(TemplateError::Kind::Syntax, "no filter named '" + n.name + "'", n.line, n.column);
    if (n.kind == Node::Kind::Test && !is_test(n.name))
        throw TemplateError(TemplateError::Kind::Syntax, "no test named '" + n.name + "'", n.line, n.column);
    for (const auto &k : n.kids)
        if (k) check_names(*k);
}

} // namespace

Template Template::parse(std::string_view source) {
    Template t;
    NodePtr root = parse_template(source);
    check_names(*root);
    t.root_ = root;
    return t;
}

std::string Template::render(const Value &context, const Limits &limits) const {
    Interpreter in(limits, context);
    return in.render(*root_);
}

} // namespace rf::jinja
