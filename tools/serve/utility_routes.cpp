#include "utility_routes.h"

#include <algorithm>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "api_error.h"

namespace rf::serve {
namespace {

namespace http = boost::beast::http;
using rapidjson::Value;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

// The text with every byte that does not begin a complete UTF-8 character replaced by U+FFFD.
std::string complete_utf8(const std::string &text) {
    std::string clean;
    for (size_t i = 0; i < text.size();) {
        const unsigned char c = (unsigned char)text[i];
        const size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        bool ok = n > 0 && i + n <= text.size();
        for (size_t j = 1; ok && j < n; ++j) ok = ((unsigned char)text[i + j] & 0xC0) == 0x80;
        if (ok) clean.append(text, i, n), i += n;
        else clean += "\xEF\xBF\xBD", ++i;
    }
    return clean;
}

void string_value(Writer &w, const std::string &s) { w.String(s.data(), (rapidjson::SizeType)s.size()); }

// The body as a JSON object whose fields are all among `known`. Throws ApiError.
rapidjson::Document object_body(const HttpRequest &req, std::initializer_list<const char *> known) {
    rapidjson::Document doc;
    const std::string &body = req.body();
    doc.Parse<rapidjson::kParseValidateEncodingFlag | rapidjson::kParseIterativeFlag>(body.data(), body.size());
    if (doc.HasParseError())
        throw bad_request(std::string("malformed JSON at offset ") + std::to_string(doc.GetErrorOffset()) + ": " +
                          rapidjson::GetParseError_En(doc.GetParseError()));
    if (!doc.IsObject()) throw bad_request("the request body must be a JSON object");
    for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
        const std::string k(it->name.GetString(), it->name.GetStringLength());
        if (std::none_of(known.begin(), known.end(), [&](const char *n) { return k == n; }))
            throw bad_request("unsupported field '" + k + "'", k);
    }
    return doc;
}

bool optional_bool(const Value &doc, const char *key, bool fallback) {
    if (!doc.HasMember(key) || doc[key].IsNull()) return fallback;
    if (!doc[key].IsBool()) throw bad_request(std::string("'") + key + "' must be a boolean", key);
    return doc[key].GetBool();
}

std::string tokenize(const HttpRequest &req, const Tokenizer &tok) {
    const rapidjson::Document doc = object_body(req, {"content", "add_special", "parse_special", "with_pieces"});
    if (!doc.HasMember("content")) throw bad_request("'content' is required", "content");
    if (!doc["content"].IsString()) throw bad_request("'content' must be a string", "content");
    const std::string content(doc["content"].GetString(), doc["content"].GetStringLength());
    // llama.cpp server's defaults: no BOS unless asked, special tokens written in the text matched.
    const bool add_special = optional_bool(doc, "add_special", false);
    const bool parse_special = optional_bool(doc, "parse_special", true);
    const bool with_pieces = optional_bool(doc, "with_pieces", false);
    const std::vector<int32_t> ids = tok.encode(content, add_special, parse_special);
    rapidjson::StringBuffer buf;
    Writer w(buf);
    w.StartObject();
    w.Key("tokens");
    w.StartArray();
    for (int32_t id : ids) {
        if (!with_pieces) {
            w.Int(id);
            continue;
        }
        w.StartObject();
        w.Key("id");
        w.Int(id);
        w.Key("piece");
        // A piece may be part of a UTF-8 character: then its bytes, as llama.cpp server sends them.
        const std::string piece = tok.token_to_piece(id, true);
        const bool valid = complete_utf8(piece) == piece;
        if (valid) string_value(w, piece);
        else {
            w.StartArray();
            for (unsigned char c : piece) w.Int(c);
            w.EndArray();
        }
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    return {buf.GetString(), buf.GetSize()};
}

std::string detokenize(const HttpRequest &req, const Tokenizer &tok) {
    const rapidjson::Document doc = object_body(req, {"tokens"});
    if (!doc.HasMember("tokens")) throw bad_request("'tokens' is required", "tokens");
    const Value &t = doc["tokens"];
    if (!t.IsArray()) throw bad_request("'tokens' must be an array of token ids", "tokens");
    std::vector<int32_t> ids;
    for (rapidjson::SizeType i = 0; i < t.Size(); ++i) {
        const std::string field = "tokens[" + std::to_string(i) + "]";
        if (!t[i].IsInt64()) throw bad_request("'" + field + "' must be an integer token id", field);
        const int64_t id = t[i].GetInt64();
        if (id < 0 || id >= tok.n_vocab())
            throw bad_request("'" + field + "' is " + std::to_string(id) + ", outside the vocabulary [0, " +
                                  std::to_string(tok.n_vocab()) + ")",
                              field);
        ids.push_back((int32_t)id);
    }
    std::string text = tok.decode(ids, false, true);
    rapidjson::StringBuffer buf;
    Writer w(buf);
    w.StartObject();
    w.Key("content");
    // Ids can end inside a character: invalid bytes become U+FFFD, so the JSON is valid.
    const std::string clean = complete_utf8(text);
    string_value(w, clean);
    w.EndObject();
    return {buf.GetString(), buf.GetSize()};
}

std::string props_body(const ServerProps &p) {
    rapidjson::StringBuffer buf;
    Writer w(buf);
    w.StartObject();
    w.Key("default_generation_settings");
    w.StartObject();
    w.Key("n_ctx");
    w.Int64(p.n_ctx);
    w.Key("params"); // the OpenAI defaults a request gets for what it leaves out
    w.StartObject();
    w.Key("n_predict");
    w.Int64(p.default_max_tokens);
    w.Key("temperature");
    w.Double(1.0);
    w.Key("top_p");
    w.Double(1.0);
    w.Key("top_k");
    w.Int(0);
    w.Key("min_p");
    w.Double(0.0);
    w.Key("repeat_penalty");
    w.Double(1.0);
    w.Key("repeat_last_n");
    w.Int(64);
    w.Key("frequency_penalty");
    w.Double(0.0);
    w.Key("presence_penalty");
    w.Double(0.0);
    w.Key("stop");
    w.StartArray();
    w.EndArray();
    w.EndObject();
    w.EndObject();
    w.Key("n_ctx");
    w.Int64(p.n_ctx);
    w.Key("total_slots");
    w.Int(p.total_slots);
    w.Key("model_path");
    string_value(w, p.model_path);
    w.Key("chat_template");
    string_value(w, p.chat_template);
    w.EndObject();
    return {buf.GetString(), buf.GetSize()};
}

} // namespace

bool is_utility_endpoint(const std::string &path) { return path == "/tokenize" || path == "/detokenize" || path == "/props"; }

bool utility_route(const HttpRequest &req, Exchange &ex, const std::string &path, const Tokenizer &tok,
                   const ServerProps &props) {
    if (!is_utility_endpoint(path)) return false;
    const bool want_get = path == "/props";
    const bool ok_method = want_get ? req.method() == http::verb::get : req.method() == http::verb::post;
    if (!ok_method) {
        const ApiError e{405, "method " + std::string(req.method_string()) + " not allowed on " + path, "invalid_request_error", ""};
        ex.respond(e.status, "application/json", error_body(e));
        return true;
    }
    try {
        const std::string body = path == "/tokenize" ? tokenize(req, tok) : path == "/detokenize" ? detokenize(req, tok) : props_body(props);
        ex.respond(200, "application/json", body);
    } catch (const ApiError &e) {
        ex.respond(e.status, "application/json", error_body(e));
    }
    return true;
}

} // namespace rf::serve
