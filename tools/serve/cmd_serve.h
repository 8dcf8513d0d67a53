#pragma once
// rocmforge serve: an OpenAI-compatible HTTP server with continuous batching (docs/SERVING.md).
int cmd_serve(int argc, char **argv);
