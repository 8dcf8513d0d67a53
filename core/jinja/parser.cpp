#include "parser.h"

#include "lexer.h"

namespace rf::jinja {
namespace {

using T = Token::Type;
using K = Node::Kind;

// Deeper nesting than this is refused at parse time, so evaluating a tree never recurses
// without bound (a hostile "((((...))))" or a thousand nested ifs).
constexpr int kMaxNesting = 200;

class Parser {
public:
    explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

    NodePtr parse() {
        std::vector<std::string> ends;
        NodePtr body = block({}, ends);
        if (cur().type != T::End) fail("unexpected '" + tag_name() + "'");
        return body;
    }

private:
    std::vector<Token> t_;
    size_t i_ = 0;
    int depth_ = 0;

    struct Nest {
        Parser &p;
        explicit Nest(Parser &parser) : p(parser) {
            if (++p.depth_ > kMaxNesting) p.fail("template nested too deeply (more than " + std::to_string(kMaxNesting) + " levels)");
        }
        ~Nest() { --p.depth_; }
    };

    // A left-deep chain (a + b + c, x.a.b, v|f|g) nests one level per link without recursing
    // in the parser: each link counts as a level until the chain ends.
    struct Chain {
        Parser &p;
        int links = 0;
        explicit Chain(Parser &parser) : p(parser) {}
        void link() {
            ++links;
            if (++p.depth_ > kMaxNesting) p.fail("expression nested too deeply (more than " + std::to_string(kMaxNesting) + " levels)");
        }
        ~Chain() { p.depth_ -= links; }
    };

    const Token &cur() const { return t_[i_]; }
    const Token &peek(size_t k = 1) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
    [[noreturn]] void fail(const std::string &msg) const { fail_at(msg, cur()); }
    [[noreturn]] static void fail_at(const std::string &msg, const Token &t) {
        throw TemplateError(TemplateError::Kind::Syntax, msg, t.line, t.column);
    }
    NodePtr node(K k) const { return std::make_shared<Node>(k, cur().line, cur().column); }
    NodePtr node(K k, const NodePtr &at) const { return std::make_shared<Node>(k, at->line, at->column); }

    std::string describe(const Token &t) const {
        switch (t.type) {
        case T::End: return "end of template";
        case T::VarEnd: return "'}}'";
        case T::BlockEnd: return "'%}'";
        case T::Name: return "'" + t.text + "'";
        case T::String: return "string";
        case T::Int:
        case T::Float: return "number";
        case T::Op: return "'" + t.text + "'";
        default: return "text";
        }
    }
    bool is_op(const char *op) const { return cur().type == T::Op && cur().text == op; }
    bool is_name(const char *n) const { return cur().type == T::Name && cur().text == n; }
    void expect_op(const char *op) {
        if (!is_op(op)) fail(std::string("expected '") + op + "', got " + describe(cur()));
        ++i_;
    }
    std::string expect_name() {
        if (cur().type != T::Name) fail("expected a name, got " + describe(cur()));
        return t_[i_++].text;
    }
    void expect_block_end() {
        if (cur().type != T::BlockEnd) fail("expected '%}', got " + describe(cur()));
        ++i_;
    }
    std::string tag_name() const {
        if (cur().type == T::BlockBegin && peek().type == T::Name) return peek().text;
        return describe(cur());
    }

    // Statements until a block tag whose name is in `stop`; leaves the position at that tag's
    // name (after '{%'). `ends` gets the name found.
    NodePtr block(const std::vector<std::string> &stop, std::vector<std::string> &found) {
        Nest nest(*this);
        NodePtr body = node(K::Body);
        for (;;) {
            const Token &t = cur();
            if (t.type == T::End) {
                if (!stop.empty()) {
                    std::string want;
                    for (const auto &s : stop) want += (want.empty() ? "'" : " or '") + s + "'";
                    fail("unexpected end of template: expected " + want);
                }
                return body;
            }
            if (t.type == T::Text) {
                NodePtr n = node(K::Text);
                n->literal = Value(t.text);
                body->kids.push_back(n);
                ++i_;
            } else if (t.type == T::VarBegin) {
                NodePtr n = node(K::Print);
                ++i_;
                n->kids.push_back(tuple_expr(true));
                if (cur().type != T::VarEnd) fail("expected '}}', got " + describe(cur()));
                ++i_;
                body->kids.push_back(n);
            } else if (t.type == T::BlockBegin) {
                ++i_;
                if (cur().type != T::Name) fail("expected a statement name after '{%', got " + describe(cur()));
                const std::string &name = cur().text;
                for (const auto &s : stop)
                    if (name == s) {
                        found.push_back(name);
                        return body;
                    }
                body->kids.push_back(statement());
            } else
                fail("unexpected " + describe(t));
        }
    }

    NodePtr statement() {
        const std::string name = cur().text;
        if (name == "if") return if_stmt();
        if (name == "for") return for_stmt();
        if (name == "set") return set_stmt();
        if (name == "macro") return macro_stmt();
        if (name == "break" || name == "continue") {
            NodePtr n = node(name == "break" ? K::Break : K::Continue);
            ++i_;
            expect_block_end();
            return n;
        }
        if (name == "generation" || name == "block") { // transformers' {% generation %}: a marker only
            const std::string end = "end" + name;
            ++i_;
            if (name == "block") expect_name();
            expect_block_end();
            std::vector<std::string> found;
            NodePtr body = block({end}, found);
            ++i_;
            if (name == "block" && cur().type == T::Name) ++i_;
            expect_block_end();
            return body;
        }
        if (name == "filter") return filter_block();
        if (name == "include" || name == "import" || name == "from" || name == "extends" || name == "call")
            fail("'" + name + "' is not supported in a chat template");
        fail("unknown statement '" + name + "'");
    }

    NodePtr if_stmt() {
        NodePtr n = node(K::If);
        ++i_;
        for (;;) {
            n->kids.push_back(expression());
            expect_block_end();
            std::vector<std::string> found;
            n->kids.push_back(block({"elif", "else", "endif"}, found));
            const std::string end = found.back();
            ++i_;
            if (end == "elif") continue;
            if (end == "else") {
                expect_block_end();
                std::vector<std::string> f2;
                n->kids.push_back(block({"endif"}, f2));
                n->has_else = true;
                ++i_;
            }
            expect_block_end();
            return n;
        }
    }

    NodePtr for_stmt() {
        NodePtr n = node(K::For);
        ++i_;
        n->names.push_back(expect_name());
        while (is_op(",")) {
            ++i_;
            n->names.push_back(expect_name());
        }
        if (!is_name("in")) fail("expected 'in' in a for loop, got " + describe(cur()));
        ++i_;
        n->kids.push_back(tuple_expr(false));
        NodePtr filter;
        if (is_name("if")) {
            ++i_;
            filter = expression();
        }
        if (is_name("recursive")) fail("recursive loops are not supported");
        expect_block_end();
        std::vector<std::string> found;
        n->kids.push_back(block({"else", "endfor"}, found));
        n->kids.push_back(filter);
        NodePtr else_body;
        ++i_;
        if (found.back() == "else") {
            expect_block_end();
            std::vector<std::string> f2;
            else_body = block({"endfor"}, f2);
            ++i_;
        }
        n->kids.push_back(else_body);
        expect_block_end();
        return n;
    }

    NodePtr set_stmt() {
        NodePtr n = node(K::Set);
        ++i_;
        n->names.push_back(expect_name());
        if (is_op(".")) {
            ++i_;
            n->attr = expect_name();
        } else
            while (is_op(",")) {
                ++i_;
                n->names.push_back(expect_name());
            }
        if (is_op("=")) {
            ++i_;
            n->kids.push_back(tuple_expr(true));
            expect_block_end();
            return n;
        }
        if (!n->attr.empty() || n->names.size() != 1) fail("expected '=' in a set statement");
        // {% set x %}...{% endset %}
        n->kind = K::SetBlock;
        expect_block_end();
        std::vector<std::string> found;
        n->kids.push_back(block({"endset"}, found));
        ++i_;
        expect_block_end();
        return n;
    }

    NodePtr macro_stmt() {
        NodePtr n = node(K::Macro);
        ++i_;
        n->name = expect_name();
        expect_op("(");
        std::vector<NodePtr> defaults;
        while (!is_op(")")) {
            if (!n->names.empty()) expect_op(",");
            if (is_op(")")) break;
            n->names.push_back(expect_name());
            if (is_op("=")) {
                ++i_;
                defaults.push_back(expression());
            } else
                defaults.push_back(nullptr);
        }
        ++i_;
        expect_block_end();
        std::vector<std::string> found;
        n->kids.push_back(block({"endmacro"}, found));
        ++i_;
        if (cur().type == T::Name) ++i_; // {% endmacro name %}
        expect_block_end();
        for (auto &d : defaults) n->kids.push_back(d);
        return n;
    }

    NodePtr filter_block() {
        NodePtr n = node(K::FilterBlock);
        ++i_;
        NodePtr chain;
        do {
            if (chain) ++i_;
            chain = filter_call(chain);
        } while (is_op("|"));
        expect_block_end();
        std::vector<std::string> found;
        n->kids.push_back(block({"endfilter"}, found));
        ++i_;
        expect_block_end();
        n->kids.push_back(chain);
        return n;
    }

    // Expressions.
    NodePtr tuple_expr(bool with_condexpr) {
        NodePtr first = with_condexpr ? expression() : or_expr();
        if (!is_op(",")) return first;
        NodePtr t = node(K::TupleLit, first);
        t->kids.push_back(first);
        while (is_op(",")) {
            ++i_;
            if (cur().type == T::VarEnd || cur().type == T::BlockEnd || is_op(")") || is_op("=")) break;
            t->kids.push_back(with_condexpr ? expression() : or_expr());
        }
        return t;
    }

    NodePtr expression() {
        Nest nest(*this);
        NodePtr value = or_expr();
        Chain chain(*this);
        while (is_name("if")) {
            chain.link();
            NodePtr c = node(K::CondExpr, value);
            ++i_;
            c->kids.push_back(value);
            c->kids.push_back(or_expr());
            if (is_name("else")) {
                ++i_;
                c->kids.push_back(expression());
            } else
                c->kids.push_back(nullptr);
            value = c;
        }
        return value;
    }

    NodePtr binary(K kind, NodePtr l, NodePtr r) {
        NodePtr n = node(kind, l);
        n->kids = {std::move(l), std::move(r)};
        return n;
    }

    NodePtr or_expr() {
        NodePtr l = and_expr();
        Chain chain(*this);
        while (is_name("or")) {
            chain.link();
            ++i_;
            l = binary(K::Or, l, and_expr());
        }
        return l;
    }
    NodePtr and_expr() {
        NodePtr l = not_expr();
        Chain chain(*this);
        while (is_name("and")) {
            chain.link();
            ++i_;
            l = binary(K::And, l, not_expr());
        }
        return l;
    }
    NodePtr not_expr() {
        if (is_name("not")) {
            Nest nest(*this);
            NodePtr n = node(K::Not);
            ++i_;
            n->kids.push_back(not_expr());
            return n;
        }
        return compare();
    }
    NodePtr compare() {
        NodePtr first = math1();
        NodePtr c;
        Chain chain(*this);
        for (;;) {
            chain.link();
            std::string op;
            if (cur().type == T::Op && (cur().text == "==" || cur().text == "!=" || cur().text == "<" || cur().text == "<=" ||
                                        cur().text == ">" || cur().text == ">=")) {
                op = cur().text;
                ++i_;
            } else if (is_name("in")) {
                op = "in";
                ++i_;
            } else if (is_name("not") && peek().type == T::Name && peek().text == "in") {
                op = "notin";
                i_ += 2;
            } else
                break;
            if (!c) {
                c = node(K::Compare, first);
                c->kids.push_back(first);
            }
            c->names.push_back(op);
            c->kids.push_back(math1());
        }
        return c ? c : first;
    }
    NodePtr binop(NodePtr l, const std::string &op, NodePtr r) {
        NodePtr n = binary(K::Binary, std::move(l), std::move(r));
        n->name = op;
        return n;
    }
    NodePtr math1() {
        NodePtr l = concat();
        Chain chain(*this);
        while (is_op("+") || is_op("-")) {
            chain.link();
            const std::string op = t_[i_++].text;
            l = binop(l, op, concat());
        }
        return l;
    }
    NodePtr concat() {
        NodePtr l = math2();
        Chain chain(*this);
        while (is_op("~")) {
            chain.link();
            ++i_;
            l = binop(l, "~", math2());
        }
        return l;
    }
    NodePtr math2() {
        NodePtr l = pow_expr();
        Chain chain(*this);
        while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
            chain.link();
            const std::string op = t_[i_++].text;
            l = binop(l, op, pow_expr());
        }
        return l;
    }
    NodePtr pow_expr() {
        NodePtr l = unary(true);
        Chain chain(*this);
        while (is_op("**")) {
            chain.link();
            ++i_;
            l = binop(l, "**", unary(true));
        }
        return l;
    }
    NodePtr unary(bool with_filter) {
        Nest nest(*this);
        NodePtr n;
        if (is_op("-") || is_op("+")) {
            n = node(is_op("-") ? K::Neg : K::Pos);
            ++i_;
            n->kids.push_back(unary(false));
        } else
            n = primary();
        n = postfix(n);
        if (with_filter) n = filter_expr(n);
        return n;
    }

    NodePtr primary() {
        const Token &t = cur();
        if (t.type == T::Name) {
            if (t.text == "true" || t.text == "True" || t.text == "false" || t.text == "False") {
                NodePtr n = node(K::Literal);
                n->literal = Value(t.text[0] == 't' || t.text[0] == 'T');
                ++i_;
                return n;
            }
            if (t.text == "none" || t.text == "None") {
                NodePtr n = node(K::Literal);
                n->literal = Value::none();
                ++i_;
                return n;
            }
            NodePtr n = node(K::Name);
            n->name = t.text;
            ++i_;
            return n;
        }
        if (t.type == T::String) {
            NodePtr n = node(K::Literal);
            std::string s;
            while (cur().type == T::String) s += t_[i_++].text; // "a" "b" is "ab"
            n->literal = Value(std::move(s));
            return n;
        }
        if (t.type == T::Int || t.type == T::Float) {
            NodePtr n = node(K::Literal);
            n->literal = t.type == T::Int ? Value(t.int_value) : Value(t.float_value);
            ++i_;
            return n;
        }
        if (is_op("(")) {
            const Token &open = cur();
            ++i_;
            if (is_op(")")) {
                ++i_;
                NodePtr n = std::make_shared<Node>(K::TupleLit, open.line, open.column);
                return n;
            }
            NodePtr e = expression();
            if (is_op(",")) {
                NodePtr tup = std::make_shared<Node>(K::TupleLit, open.line, open.column);
                tup->kids.push_back(e);
                while (is_op(",")) {
                    ++i_;
                    if (is_op(")")) break;
                    tup->kids.push_back(expression());
                }
                e = tup;
            }
            expect_op(")");
            return e;
        }
        if (is_op("[")) {
            NodePtr n = node(K::ListLit);
            ++i_;
            while (!is_op("]")) {
                if (!n->kids.empty()) expect_op(",");
                if (is_op("]")) break;
                n->kids.push_back(expression());
            }
            ++i_;
            return n;
        }
        if (is_op("{")) {
            NodePtr n = node(K::DictLit);
            ++i_;
            while (!is_op("}")) {
                if (!n->kids.empty()) expect_op(",");
                if (is_op("}")) break;
                n->kids.push_back(expression());
                expect_op(":");
                n->kids.push_back(expression());
            }
            ++i_;
            return n;
        }
        fail("unexpected " + describe(t));
    }

    NodePtr postfix(NodePtr n) {
        Chain chain(*this);
        for (;;) {
            chain.link();
            if (is_op(".")) {
                ++i_;
                if (cur().type == T::Int) { // foo.0 is foo[0]
                    NodePtr g = node(K::GetItem, n);
                    NodePtr idx = node(K::Literal);
                    idx->literal = Value(cur().int_value);
                    ++i_;
                    g->kids = {n, idx};
                    n = g;
                    continue;
                }
                NodePtr g = node(K::GetAttr, n);
                g->name = expect_name();
                g->kids.push_back(n);
                n = g;
            } else if (is_op("[")) {
                ++i_;
                n = subscript(n);
            } else if (is_op("(")) {
                NodePtr c = node(K::Call, n);
                c->kids.push_back(n);
                call_args(c);
                n = c;
            } else
                return n;
        }
    }

    NodePtr subscript(NodePtr obj) {
        NodePtr parts[3];
        int colons = 0;
        bool any = false;
        const int line = cur().line, col = cur().column;
        while (!is_op("]")) {
            if (is_op(":")) {
                if (++colons > 2) fail("too many ':' in a slice");
                ++i_;
                continue;
            }
            if (parts[colons]) fail("expected ']' or ':', got " + describe(cur()));
            parts[colons] = expression();
            any = true;
            if (!is_op(":") && !is_op("]")) {
                if (colons == 0 && is_op(",")) fail("tuple subscripts are not supported");
                fail("expected ']', got " + describe(cur()));
            }
        }
        ++i_;
        if (colons == 0) {
            if (!any) fail("empty subscript");
            NodePtr g = std::make_shared<Node>(K::GetItem, line, col);
            g->kids = {obj, parts[0]};
            return g;
        }
        NodePtr s = std::make_shared<Node>(K::Slice, line, col);
        s->kids = {obj, parts[0], parts[1], parts[2]};
        return s;
    }

    // ( args ) after the callee; kids get positional then keyword arguments.
    void call_args(const NodePtr &c) {
        expect_op("(");
        std::vector<NodePtr> positional, keyword;
        bool first = true;
        while (!is_op(")")) {
            if (!first) expect_op(",");
            first = false;
            if (is_op(")")) break;
            if (is_op("*") || is_op("**")) fail("*args and **kwargs are not supported");
            if (cur().type == T::Name && peek().type == T::Op && peek().text == "=") {
                c->names.push_back(cur().text);
                i_ += 2;
                keyword.push_back(expression());
            } else {
                if (!keyword.empty()) fail("positional argument after a keyword argument");
                positional.push_back(expression());
            }
        }
        ++i_;
        for (auto &p : positional) c->kids.push_back(p);
        for (auto &k : keyword) c->kids.push_back(k);
    }

    NodePtr filter_call(NodePtr value) {
        NodePtr f = node(K::Filter);
        f->name = expect_name();
        while (is_op(".")) { // dotted filter names
            ++i_;
            f->name += '.';
            f->name += expect_name();
        }
        f->kids.push_back(value);
        if (is_op("(")) call_args(f);
        return f;
    }

    NodePtr filter_expr(NodePtr n) {
        Chain chain(*this);
        for (;;) {
            chain.link();
            if (is_op("|")) {
                ++i_;
                n = filter_call(n);
            } else if (is_name("is")) {
                NodePtr t = node(K::Test, n);
                ++i_;
                if (is_name("not")) {
                    t->negated = true;
                    ++i_;
                }
                t->name = expect_name();
                t->kids.push_back(n);
                if (is_op("(")) call_args(t);
                else if ((cur().type == T::Name || cur().type == T::String || cur().type == T::Int || cur().type == T::Float ||
                          is_op("[") || is_op("{")) &&
                         !is_name("else") && !is_name("or") && !is_name("and")) {
                    if (is_name("is")) fail("tests cannot be chained with 'is'");
                    NodePtr arg = postfix(primary());
                    t->kids.push_back(arg);
                }
                n = t;
            } else if (is_op("(")) {
                NodePtr c = node(K::Call, n);
                c->kids.push_back(n);
                call_args(c);
                n = c;
            } else
                return n;
        }
    }
};

} // namespace

NodePtr parse_template(std::string_view source) { return Parser(tokenize(source)).parse(); }

} // namespace rf::jinja
