// `rocmforge template -m MODEL --messages FILE [--tools FILE] [--chat-template-file F]
// [--chat-template NAME] [--no-generation-prompt]`: the prompt a conversation renders to.
#pragma once

int cmd_template(int argc, char **argv);
