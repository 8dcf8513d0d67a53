#include "embedding_request.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "api_error.h"
#include "rocmforge/error.h"
#include "../json_type_name.h"

namespace rf::serve {
namespace {

using rapidjson::Value;

const char *type_name(const Value &v) { return json_type_name(v); }

constexpr const char *kInputShapes = "a string, an array of strings, an array of token ids or an array of token-id arrays";

// "'input'[2][5] = ..." for an element, "'input' is ..." for the whole.
ApiError bad_input(const std::string &what) {
    return bad_request(std::string("'input'") + (what.starts_with('[') ? "" : " ") + what, "input");
}

std::string str(const Value &v) { return {v.GetString(), v.GetStringLength()}; }

// One input's tokens, checked: not empty, ids in the vocabulary, at most max_tokens.
std::vector<int32_t> token_array(const Value &a, const std::string &where, const EmbeddingLimits &limits) {
    std::vector<int32_t> out;
    for (rapidjson::SizeType i = 0; i < a.Size(); ++i) {
        const Value &t = a[i];
        if (!t.IsInt64())
            throw bad_input(where + "[" + std::to_string(i) + "] must be a token id (an integer), got " + type_name(t));
        const int64_t id = t.GetInt64();
        if (id < 0 || id >= limits.n_vocab)
            throw bad_input(where + "[" + std::to_string(i) + "] = " + std::to_string(id) +
                            " is outside the vocabulary (0.." + std::to_string(limits.n_vocab - 1) + ")");
        out.push_back((int32_t)id);
    }
    return out;
}

std::vector<int32_t> text_tokens(const Value &s, const std::string &where, const Tokenizer &tok) {
    if (s.GetStringLength() == 0) throw bad_input((where.empty() ? "" : where + " ") + "is an empty string");
    return tok.encode(std::string_view(s.GetString(), s.GetStringLength()), /*add_special=*/true, /*parse_special=*/false);
}

void check_length(const std::vector<int32_t> &t, const std::string &where, const EmbeddingLimits &limits) {
    if (t.empty()) throw bad_input((where.empty() ? "" : where + " ") + "has no tokens");
    if ((int64_t)t.size() > limits.max_tokens)
        throw bad_input((where.empty() ? "" : where + " ") + "has " + std::to_string(t.size()) + " tokens; this server embeds at most " +
                        std::to_string(limits.max_tokens) + " per input");
}

std::vector<std::vector<int32_t>> parse_input(const Value &v, const Tokenizer &tok, const EmbeddingLimits &limits) {
    std::vector<std::vector<int32_t>> inputs;
    if (v.IsString()) {
        inputs.push_back(text_tokens(v, "", tok));
        check_length(inputs.back(), "", limits);
    } else if (v.IsArray()) {
        if (v.Empty()) throw bad_input("is an empty array");
        if (v[0].IsInt64()) { // one token array
            inputs.push_back(token_array(v, "", limits));
            check_length(inputs.back(), "", limits);
        } else {
            if (v.Size() > limits.max_inputs)
                throw bad_input("has " + std::to_string(v.Size()) + " inputs; at most " + std::to_string(limits.max_inputs));
            const bool strings = v[0].IsString();
            for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
                const Value &e = v[i];
                const std::string where = "[" + std::to_string(i) + "]";
                if (strings && e.IsString()) inputs.push_back(text_tokens(e, where, tok));
                else if (!strings && e.IsArray()) {
                    if (e.Empty()) throw bad_input(where + " is an empty token array");
                    inputs.push_back(token_array(e, where, limits));
                } else
                    throw bad_input("must be " + std::string(kInputShapes) + "; element " + where + " is " + type_name(e) +
                                    (i ? " among " + std::string(strings ? "strings" : "token arrays") : ""));
                check_length(inputs.back(), where, limits);
            }
        }
    } else {
        throw bad_input("must be " + std::string(kInputShapes) + ", got " + type_name(v));
    }
    return inputs;
}

} // namespace

EmbeddingRequest parse_embedding_request(std::string_view body, const Tokenizer &tok, const EmbeddingLimits &limits) {
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseValidateEncodingFlag>(body.data(), body.size());
    if (doc.HasParseError())
        throw bad_request(std::string("malformed JSON at offset ") + std::to_string(doc.GetErrorOffset()) + ": " +
                          rapidjson::GetParseError_En(doc.GetParseError()));
    if (!doc.IsObject()) throw bad_request("the request body must be a JSON object");
    if (!doc.HasMember("input")) throw bad_request("'input' is required", "input");
    EmbeddingRequest r;
    const Value &root = doc;
    for (auto it = root.MemberBegin(); it != root.MemberEnd(); ++it) {
        const std::string key = str(it->name);
        const Value &v = it->value;
        if (key == "input") {
            r.inputs = parse_input(v, tok, limits);
        } else if (key == "model") {
            if (!v.IsString()) throw bad_request("'model' must be a string, got " + std::string(type_name(v)), "model");
            r.model = str(v);
        } else if (key == "user") {
            if (!v.IsString()) throw bad_request("'user' must be a string, got " + std::string(type_name(v)), "user");
        } else if (key == "encoding_format") {
            if (v.IsNull()) continue;
            const std::string f = v.IsString() ? str(v) : "";
            if (f != "float" && f != "base64")
                throw bad_request("'encoding_format' must be \"float\" or \"base64\"", "encoding_format");
            r.base64 = f == "base64";
        } else if (key == "dimensions") {
            if (v.IsNull()) continue;
            if (!v.IsInt64()) throw bad_request("'dimensions' must be an integer, got " + std::string(type_name(v)), "dimensions");
            if (v.GetInt64() != limits.n_embd)
                throw bad_request("'dimensions' is " + std::to_string(v.GetInt64()) + " but this model's embeddings have " +
                                      std::to_string(limits.n_embd) + " and cannot be shortened",
                                  "dimensions");
        } else if (key == "pooling") {
            if (v.IsNull()) continue;
            try {
                if (!v.IsString()) throw UsageError("not a string");
                r.pooling = parse_pooling(str(v));
            } catch (const UsageError &) {
                throw bad_request("'pooling' must be \"mean\", \"cls\" or \"last\"", "pooling");
            }
        } else {
            throw bad_request("unknown field '" + key + "'", key);
        }
    }
    for (const auto &t : r.inputs) r.prompt_tokens += (int64_t)t.size();
    return r;
}

} // namespace rf::serve
