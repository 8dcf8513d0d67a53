#include "apply_template.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "api_error.h"
#include "request_parse.h"

namespace rf::serve {

void apply_template(const HttpRequest &req, Exchange &ex, const ChatTemplate &tmpl) {
    std::string prompt;
    try {
        // The body a chat completion takes, checked the same way.
        const CompletionRequest r = parse_completion_request(req.body(), /*chat=*/true);
        try {
            prompt = tmpl.apply({r.messages, r.tools_json, /*add_generation_prompt=*/true, r.template_kwargs_json});
        } catch (const UsageError &e) {
            throw bad_request(e.what(), "messages");
        }
    } catch (const ApiError &e) {
        return (void)ex.respond(e.status, "application/json", error_body(e));
    }
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.StartObject();
    w.Key("prompt");
    w.String(prompt.data(), (rapidjson::SizeType)prompt.size());
    w.EndObject();
    ex.respond(200, "application/json", std::string(buf.GetString(), buf.GetSize()));
}

} // namespace rf::serve
