#include "embedding_response.h"

#include <cstdio>
#include <cstring>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace rf::serve {

std::string float32_base64(const std::vector<float> &v) {
    static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::vector<unsigned char> bytes;
    bytes.reserve(v.size() * 4);
    for (float f : v) {
        uint32_t u;
        std::memcpy(&u, &f, 4);
        for (int k = 0; k < 4; ++k) bytes.push_back((unsigned char)(u >> (8 * k))); // little-endian on any host
    }
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (size_t i = 0; i < bytes.size(); i += 3) {
        const uint32_t b = (uint32_t)bytes[i] << 16 | (i + 1 < bytes.size() ? (uint32_t)bytes[i + 1] << 8 : 0) |
                           (i + 2 < bytes.size() ? (uint32_t)bytes[i + 2] : 0);
        out += kAlphabet[b >> 18 & 63];
        out += kAlphabet[b >> 12 & 63];
        out += i + 1 < bytes.size() ? kAlphabet[b >> 6 & 63] : '=';
        out += i + 2 < bytes.size() ? kAlphabet[b & 63] : '=';
    }
    return out;
}

std::string embeddings_body(const std::vector<std::vector<float>> &vectors, bool base64, const std::string &model,
                            int64_t prompt_tokens) {
    rapidjson::StringBuffer sb;
    rapidjson::Writer<rapidjson::StringBuffer> w(sb);
    w.StartObject();
    w.Key("object");
    w.String("list");
    w.Key("data");
    w.StartArray();
    char num[32];
    for (size_t i = 0; i < vectors.size(); ++i) {
        w.StartObject();
        w.Key("object");
        w.String("embedding");
        w.Key("index");
        w.Int64((int64_t)i);
        w.Key("embedding");
        if (base64) {
            const std::string s = float32_base64(vectors[i]);
            w.String(s.c_str(), (rapidjson::SizeType)s.size());
        } else {
            // Writer::Double would print the float's double expansion (0.100000001490116...).
            w.StartArray();
            for (float f : vectors[i]) {
                const int n = std::snprintf(num, sizeof num, "%.9g", (double)f);
                w.RawValue(num, (size_t)n, rapidjson::kNumberType);
            }
            w.EndArray();
        }
        w.EndObject();
    }
    w.EndArray();
    w.Key("model");
    w.String(model.c_str(), (rapidjson::SizeType)model.size());
    w.Key("usage");
    w.StartObject();
    w.Key("prompt_tokens");
    w.Int64(prompt_tokens);
    w.Key("total_tokens");
    w.Int64(prompt_tokens);
    w.EndObject();
    w.EndObject();
    return sb.GetString();
}

} // namespace rf::serve
