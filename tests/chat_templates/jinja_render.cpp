// jinja-render TEMPLATE CONTEXT.json: the template rendered with the JSON object's members as
// its variables, as render_reference.py renders it with jinja2 (compare_with_jinja2.py runs
// both). Exit 3 with "raised: MESSAGE" when the template raises, 2 when it does not parse, 1
// for other errors.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "rocmforge/jinja.h"

static bool read(const char *path, std::string &out) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return false;
    std::stringstream s;
    s << f.rdbuf();
    out = s.str();
    return true;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: jinja-render TEMPLATE CONTEXT.json\n");
        return 2;
    }
    std::string source, context;
    if (!read(argv[1], source) || !read(argv[2], context)) {
        std::fprintf(stderr, "cannot read %s or %s\n", argv[1], argv[2]);
        return 2;
    }
    using rf::jinja::TemplateError;
    try {
        const rf::jinja::Template t = rf::jinja::Template::parse(source);
        std::cout << t.render(rf::jinja::from_json(context));
        return 0;
    } catch (const TemplateError &e) {
        if (e.kind() == TemplateError::Kind::Raised) {
            std::fprintf(stderr, "raised: %s\n", e.what());
            return 3;
        }
        std::fprintf(stderr, "%s error: %s\n", e.kind() == TemplateError::Kind::Syntax ? "syntax" : "template", e.what());
        return e.kind() == TemplateError::Kind::Syntax ? 2 : 1;
    }
}
