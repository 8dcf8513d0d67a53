// An independent check of a JSON document against the JSON-schema subset the converter
// accepts (written from the JSON Schema specification, not from the converter): "" when the
// document is valid, else what is wrong and where.
#pragma once
#include <string>

#include <rapidjson/document.h>

namespace rf_test {

std::string schema_violation(const rapidjson::Value &schema, const rapidjson::Value &doc, const rapidjson::Value &root,
                             const std::string &path = "");

inline std::string schema_violation_text(const std::string &schema_json, const std::string &doc_json) {
    rapidjson::Document s, d;
    s.Parse(schema_json.data(), schema_json.size());
    if (s.HasParseError()) return "the schema is not JSON";
    d.Parse(doc_json.data(), doc_json.size());
    if (d.HasParseError()) return "the output is not JSON: " + doc_json;
    return schema_violation(s, d, s);
}

} // namespace rf_test
