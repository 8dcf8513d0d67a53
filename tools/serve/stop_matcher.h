// Stop strings on streamed text: text is released only once it cannot be the start of a stop
// string, so a client never receives part of a stop sequence (OpenAI excludes it from output).
// Matching is incremental, as generation is: after each push the text so far is searched, and
// the earliest stop string found ends it, even where a longer stop string that began earlier
// might still have completed (its rest is never generated).
#pragma once
#include <string>
#include <vector>

namespace rf::serve {

class StopMatcher {
public:
    // Empty strings are ignored (the request parser refuses them; one would match everywhere).
    explicit StopMatcher(std::vector<std::string> stops);
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
