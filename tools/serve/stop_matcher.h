// Stop strings on streamed text: text is released only once it cannot be the start of a stop
// string, so a client never receives part of a stop sequence (OpenAI excludes it from output).
#pragma once
#include <string>
#include <vector>

namespace rf::serve {

class StopMatcher {
public:
    explicit StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {}
    // Appends generated text; returns what can now be sent. After a stop string is found,
    // stopped() is true and the text up to it has been returned; later pushes return "".
    std::string push(const std::string &text);
    // End of generation without a stop string: the held-back tail.
    std::string flush();
    bool stopped() const { return stopped_; }

private:
    std::vector<std::string> stops_;
    std::string held_;
    bool stopped_ = false;
};

} // namespace rf::serve
