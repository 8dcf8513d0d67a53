// The C++ wrapper (rocmforge.hpp): a chat turn formatted with the model's template (or one
// named), generated with streaming through the library's own generation loop.
// usage: chat [MODEL.gguf] [QUESTION] [N]   (no model: the installed default model)
#include <cstdio>
#include <iostream>
#include <string>

#include <rocmforge/rocmforge.hpp>

int main(int argc, char **argv) {
    try {
        const std::string path = argc > 1 ? argv[1] : "";
        const std::string question = argc > 2 ? argv[2] : "Who made the heaven and the earth?";
        const int n_predict = argc > 3 ? std::stoi(argv[3]) : 32;

        rocmforge::Model model(path);
        std::cerr << "model: " << model.description() << "\n";

        // The default model has no chat template: fall back to ChatML there.
        const std::vector<rocmforge_chat_message> messages = {
            {"system", "You answer in the words of the King James Bible."},
            {"user", question.c_str()},
        };
        std::string prompt;
        try {
            prompt = model.chat(messages);
        } catch (const rocmforge::Error &e) {
            if (e.status() != ROCMFORGE_ERR_UNSUPPORTED) throw;
            prompt = model.chat(messages, true, "chatml");
        }

        rocmforge::Context ctx(model);
        rocmforge_sampler_params sampling = rocmforge_sampler_default_params();
        sampling.seed = 7;
        std::cout << prompt;
        const int n = ctx.generate(prompt, n_predict, [](const std::string &text) {
            std::cout << text << std::flush;
            return true;
        }, sampling);
        std::cout << "\n";
        std::cerr << n << " tokens\n";
        return 0;
    } catch (const rocmforge::Error &e) {
        std::cerr << "error: " << e.what() << "\n";
        return 1;
    }
}
