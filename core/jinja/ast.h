// The parsed form of a template: one node type for statements and expressions alike (a small
// tree walked by the interpreter), each with the line and column it starts at.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "rocmforge/jinja.h"

namespace rf::jinja {

using NodePtr = std::shared_ptr<Node>;

struct Node {
    enum class Kind {
        // Statements
        Body,     // kids: statements in order
        Text,     // literal: the text
        Print,    // kids[0]: expression
        If,       // kids: cond, body, cond, body, ..., [else body when has_else]
        For,      // names: targets; kids: iterable, body, filter or null, else body or null
        Set,      // names: targets (or the namespace); attr: its attribute; kids[0]: value
        SetBlock, // names[0]: target; kids[0]: body
        Macro,    // name; names: parameters; kids[0]: body, kids[1 + i]: default of parameter i or null
        Break,
        Continue,
        FilterBlock, // kids[0]: body; kids[1]: filter chain with a null innermost value
        // Expressions
        Literal,  // literal
        Name,     // name
        ListLit,  // kids
        TupleLit, // kids
        DictLit,  // kids: key, value, key, value, ...
        GetAttr,  // kids[0]; name
        GetItem,  // kids[0], kids[1]
        Slice,    // kids[0]; kids[1..3]: start, stop, step (null when absent)
        Call,     // kids[0]: callee, then positional args, then keyword args; names: keyword names
        Filter,   // kids[0]: value (null: a filter block's body); args as Call; name
        Test,     // kids[0]: value; args as Call; name; negated
        Neg,
        Pos,
        Not,
        And,
        Or,
        Binary,   // name: + - * / // % ** ~
        Compare,  // kids[0], kids[1..]; names[i]: operator between kids[i] and kids[i + 1]
        CondExpr, // kids[0]: value, kids[1]: condition, kids[2]: else value or null
    };
    Kind kind;
    int line = 0, column = 0;
    std::string name;
    std::string attr;
    Value literal;
    std::vector<NodePtr> kids;
    std::vector<std::string> names;
    bool has_else = false;
    bool negated = false;

    Node(Kind k, int l, int c) : kind(k), line(l), column(c) {}
    // Call / Filter / Test: positional arguments are kids[first .. end - names.size()).
    size_t n_positional(size_t first) const { return kids.size() - first - names.size(); }
};

} // namespace rf::jinja
