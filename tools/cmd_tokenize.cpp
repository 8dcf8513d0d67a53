// Prints a text's tokens the way llama.cpp's llama-tokenize does: `[1, 2, 3]` with --ids, else
// one line per token "%6d -> 'piece'" (pieces rendered with special tokens shown).
#include "cmd_tokenize.h"

#include "rocmforge/default_model.h"
#include "text_file.h"
#include "rocmforge/error.h"
#include "rocmforge/gguf.h"
#include "rocmforge/tokenizer.h"

#include <string>
#include <string_view>

namespace {

constexpr const char *kUsageLine =
    "usage: rocmforge tokenize [-m MODEL] (-p TEXT | -f FILE) [--ids] [--no-bos] [--no-parse-special]\n";
const std::string kUsage = std::string(kUsageLine) +
    "\n"
    "Tokenizes TEXT (or FILE, read byte for byte) with the model's tokenizer, as llama-tokenize.\n"
    "\n"
    "  -m, --model MODEL     GGUF file (only the tokenizer metadata is read); default: the\n"
    "                        default model, as for generate (docs/DEFAULT_MODEL.md)\n"
    "  -p, --prompt TEXT     text to tokenize (taken literally, no escape processing)\n"
    "  -f, --file FILE       file to tokenize\n"
    "  --ids                 print only the ids, as [1, 2, 3]\n"
    "  --no-bos              do not add BOS even if the vocabulary asks for it\n"
    "  --no-parse-special    treat control-token text (e.g. </s>) as plain text\n"
    "  -h, --help            show this help\n";

} // namespace

int cmd_tokenize_to(int argc, char **argv, std::FILE *out) {
    std::string model, prompt, prompt_file;
    bool have_prompt = false, have_file = false;
    bool ids_only = false, no_bos = false, no_parse_special = false;
    for (int k = 1; k < argc; ++k) {
        const std::string_view arg = argv[k];
        auto value = [&]() -> std::string {
            if (k + 1 >= argc) {
                throw rf::UsageError("option '" + std::string(arg) + "' needs a value\n" + kUsageLine);
            }
            return argv[++k];
        };
        if (arg == "-h" || arg == "--help") {
            std::fputs(kUsage.c_str(), out);
            return 0;
        } else if (arg == "-m" || arg == "--model") {
            model = value();
        } else if (arg == "-p" || arg == "--prompt") {
            prompt = value();
            have_prompt = true;
        } else if (arg == "-f" || arg == "--file") {
            prompt_file = value();
            have_file = true;
        } else if (arg == "--ids") {
            ids_only = true;
        } else if (arg == "--no-bos") {
            no_bos = true;
        } else if (arg == "--no-parse-special") {
            no_parse_special = true;
        } else {
            throw rf::UsageError("unknown option '" + std::string(arg) + "'\n" + kUsageLine);
        }
    }
    if (have_prompt == have_file) {
        throw rf::UsageError(std::string("give exactly one of -p TEXT and -f FILE\n") + kUsageLine);
    }
    if (have_file) prompt = rf::read_text_file(prompt_file, "-f");

    const auto file = rf::gguf::File::open(rf::model_path_or_default(model));
    const auto tokenizer = rf::Tokenizer::from_gguf(*file);
    const bool add_bos = tokenizer->add_bos_default() && !no_bos;
    const std::vector<int32_t> ids = tokenizer->encode(prompt, add_bos, !no_parse_special);

    if (ids_only) {
        std::string line = "[";
        for (size_t i = 0; i < ids.size(); ++i) {
            if (i) line += ", ";
            line += std::to_string(ids[i]);
        }
        line += "]\n";
        std::fputs(line.c_str(), out);
    } else {
        for (int32_t id : ids) {
            // llama-tokenize prints the piece with printf("%s"): it stops at a NUL byte.
            const std::string piece = tokenizer->token_to_piece(id, true);
            std::fprintf(out, "%6d -> '%s'\n", id, piece.c_str());
        }
    }
    return 0;
}

int cmd_tokenize(int argc, char **argv) { return cmd_tokenize_to(argc, argv, stdout); }
