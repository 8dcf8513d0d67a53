#include "logprobs_json.h"

#include <cmath>
#include <set>

#include "utf8_text.h"

namespace rf::serve {
namespace {

void str(JsonWriter &w, const std::string &s) { w.String(s.c_str(), (rapidjson::SizeType)s.size()); }

void number(JsonWriter &w, float lp) { w.Double(std::isfinite(lp) ? (double)lp : -9999.0); }

void bytes(JsonWriter &w, const std::string &s) {
    w.StartArray();
    for (unsigned char c : s) w.Uint(c);
    w.EndArray();
}

// One {"token", "logprob", "bytes"} object of the chat shape, `top_logprobs` left open.
void chat_token_fields(JsonWriter &w, const std::string &token, float lp) {
    w.Key("token");
    str(w, token_display(token));
    w.Key("logprob");
    number(w, lp);
    w.Key("bytes");
    bytes(w, token);
}

void write_chat(JsonWriter &w, const std::vector<TokenLogprob> &tokens) {
    w.StartObject();
    w.Key("content");
    w.StartArray();
    for (const TokenLogprob &t : tokens) {
        w.StartObject();
        chat_token_fields(w, t.token, t.logprob);
        w.Key("top_logprobs");
        w.StartArray();
        for (const auto &[tok, lp] : t.top) {
            w.StartObject();
            chat_token_fields(w, tok, lp);
            w.EndObject();
        }
        w.EndArray();
        w.EndObject();
    }
    w.EndArray();
    w.Key("refusal");
    w.Null();
    w.EndObject();
}

void write_completion(JsonWriter &w, const std::vector<TokenLogprob> &tokens) {
    w.StartObject();
    w.Key("tokens");
    w.StartArray();
    for (const TokenLogprob &t : tokens) str(w, token_display(t.token));
    w.EndArray();
    w.Key("token_logprobs");
    w.StartArray();
    for (const TokenLogprob &t : tokens) {
        if (t.no_logprob) w.Null();
        else number(w, t.logprob);
    }
    w.EndArray();
    w.Key("top_logprobs");
    w.StartArray();
    for (const TokenLogprob &t : tokens) {
        if (t.no_logprob) {
            w.Null();
            continue;
        }
        // A JSON object has each key once: two tokens with the same text keep the likelier.
        std::set<std::string> seen;
        w.StartObject();
        for (const auto &[tok, lp] : t.top) {
            const std::string key = token_display(tok);
            if (!seen.insert(key).second) continue;
            str(w, key);
            number(w, lp);
        }
        if (const std::string key = token_display(t.token); seen.insert(key).second) {
            str(w, key);
            number(w, t.logprob);
        }
        w.EndObject();
    }
    w.EndArray();
    w.Key("text_offset");
    w.StartArray();
    for (const TokenLogprob &t : tokens) w.Int64(t.text_offset);
    w.EndArray();
    w.EndObject();
}

} // namespace

std::string token_display(const std::string &b) {
    if (valid_utf8(b)) return b;
    static const char hex[] = "0123456789abcdef";
    std::string out = "bytes:";
    for (unsigned char c : b) {
        out += "\\x";
        out += hex[c >> 4];
        out += hex[c & 15];
    }
    return out;
}

void write_logprobs(JsonWriter &w, bool chat, const std::vector<TokenLogprob> &tokens) {
    if (chat) write_chat(w, tokens);
    else write_completion(w, tokens);
}

} // namespace rf::serve
