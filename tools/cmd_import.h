// `rocmforge import --manifest DIR/manifest.json --tokenizer TOK.json -o OUT.gguf`: turns the
// weights written by tools/train/train.py (float32 raw + JSON manifest) and the tokenizer of
// tools/train/train_tokenizer.py into a llama GGUF with llama.cpp's metadata keys.
#pragma once

// argv[0] is the subcommand name. Returns 0 on success, 2 on usage errors; throws rf::Error
// (exit code 1) for malformed inputs, naming the file and the field.
int cmd_import(int argc, char **argv);
