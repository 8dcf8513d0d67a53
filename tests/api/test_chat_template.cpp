// Chat templates: detection from template text, each format's output, bad roles.
#include <catch2/catch.hpp>

#include <string>

#include "api_fixture.h"

namespace {

std::string apply(const char *tmpl, bool add_assistant = true) {
    const rocmforge_chat_message msgs[] = {{"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello."}, {"user", "Who?"}};
    char buf[1024];
    size_t len = 0;
    const rocmforge_status st = rocmforge_chat_apply_template(nullptr, tmpl, msgs, 4, add_assistant, buf, sizeof buf, &len);
    INFO(rocmforge_last_error());
    REQUIRE(st == ROCMFORGE_OK);
    return std::string(buf, len);
}

} // namespace

TEST_CASE("each chat format by name", "[api][chat]") {
    CHECK(apply("chatml") == "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                             "<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nWho?<|im_end|>\n<|im_start|>assistant\n");
    CHECK(apply("llama2") == "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST]Hello.</s><s>[INST] Who? [/INST]");
    CHECK(apply("mistral") == "[INST] Be brief.\nHi [/INST]Hello.</s>[INST] Who? [/INST]");
    CHECK(apply("llama3") == "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
                             "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                             "<|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|>"
                             "<|start_header_id|>user<|end_header_id|>\n\nWho?<|eot_id|>"
                             "<|start_header_id|>assistant<|end_header_id|>\n\n");
    CHECK(apply("gemma") == "<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello.<end_of_turn>\n"
                            "<start_of_turn>user\nWho?<end_of_turn>\n<start_of_turn>model\n");
    CHECK(apply("phi3") == "<|system|>\nBe brief.<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\nHello.<|end|>\n"
                           "<|user|>\nWho?<|end|>\n<|assistant|>\n");
    // gpt-oss's harmony: the assistant's past answers on the final channel, an open assistant turn.
    const std::string harmony = "<|start|>system<|message|>Be brief.<|end|><|start|>user<|message|>Hi<|end|>"
                                "<|start|>assistant<|channel|>final<|message|>Hello.<|end|>"
                                "<|start|>user<|message|>Who?<|end|><|start|>assistant";
    CHECK(apply("gpt-oss") == harmony);
    CHECK(apply("harmony") == harmony);
    CHECK(apply("gpt-oss", false) == harmony.substr(0, harmony.size() - std::string("<|start|>assistant").size()));
    const std::string closed = apply("chatml", false);
    CHECK(closed.substr(closed.size() - 15) == "Who?<|im_end|>\n");
}

TEST_CASE("chat formats recognised from template text", "[api][chat]") {
    // Fragments of the templates these model families ship.
    CHECK(apply("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>'}}")
              .rfind("<|im_start|>system", 0) == 0);
    CHECK(apply("{{ bos_token }}{% if messages[0]['role'] == 'system' %}<<SYS>>\\n{{ '[INST] ' }}").rfind("[INST] <<SYS>>", 0) == 0);
    CHECK(apply("{{ bos_token }}{% for message in messages %}{{ '[INST] ' + message['content'] + ' [/INST]' }}").rfind("[INST] Be brief.\n", 0) == 0);
    CHECK(apply("{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' %}").rfind("<|start_header_id|>system", 0) == 0);
    CHECK(apply("{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}").rfind("<start_of_turn>user", 0) == 0);
    CHECK(apply("{{'<|' + message['role'] + '|>' + '\\n' + message['content'] + '<|end|>\\n'}}{{ '<|assistant|>\\n' }}").rfind("<|system|>", 0) == 0);
    CHECK(apply("{{- '<|start|>' + message.role + '<|message|>' + message.content + '<|end|>' }}{{- '<|start|>assistant' }}")
              .rfind("<|start|>system<|message|>", 0) == 0);
}

TEST_CASE("chat template errors", "[api][chat]") {
    const rocmforge_chat_message bad[] = {{"wizard", "hi"}};
    char buf[64];
    size_t len = 0;
    REQUIRE_FAILS(rocmforge_chat_apply_template(nullptr, "chatml", bad, 1, true, buf, sizeof buf, &len), ROCMFORGE_ERR_INVALID_ARGUMENT, "role 'wizard'");
    const rocmforge_chat_message ok[] = {{"user", "hi"}};
    REQUIRE_FAILS(rocmforge_chat_apply_template(nullptr, "{{ unknown }}", ok, 1, true, buf, sizeof buf, &len), ROCMFORGE_ERR_INVALID_ARGUMENT, "not recognised");
    REQUIRE_FAILS(rocmforge_chat_apply_template(nullptr, nullptr, ok, 1, true, buf, sizeof buf, &len), ROCMFORGE_ERR_INVALID_ARGUMENT, "model is NULL");
    // The default model has no chat template of its own.
    REQUIRE_FAILS(rocmforge_chat_apply_template(api_test::model(), nullptr, ok, 1, true, buf, sizeof buf, &len), ROCMFORGE_ERR_UNSUPPORTED, "no tokenizer.chat_template");
    REQUIRE_FAILS(rocmforge_chat_apply_template(nullptr, "chatml", ok, 1, true, buf, 4, &len), ROCMFORGE_ERR_BUFFER_TOO_SMALL, "bytes");
}
