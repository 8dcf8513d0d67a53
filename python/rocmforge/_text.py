"""Text assembly for generations: stop strings found across token boundaries."""


class StopMatcher:
    """Cuts generated text at the first of `stops`. Text that could still become the start of a
    stop string is held back until the next piece decides it, so a streamed generation never
    hands out the beginning of a stop string it then has to take back."""

    def __init__(self, stops):
        self.stops = [s for s in stops if s]
        self.pending = ""
        self.stopped = False

    def push(self, text):
        """The text safe to hand out now. Sets `stopped` when a stop string appeared: the text
        before it is returned and everything from it on is dropped."""
        if not self.stops:
            return text
        self.pending += text
        first = -1
        for s in self.stops:
            i = self.pending.find(s)
            if i >= 0 and (first < 0 or i < first):
                first = i
        if first >= 0:
            out, self.pending, self.stopped = self.pending[:first], "", True
            return out
        hold = 0
        for s in self.stops:
            for k in range(min(len(s) - 1, len(self.pending)), hold, -1):
                if self.pending.endswith(s[:k]):
                    hold = k
                    break
        cut = len(self.pending) - hold
        out, self.pending = self.pending[:cut], self.pending[cut:]
        return out

    def flush(self):
        """What is still held back once the generation ended without a stop string."""
        out, self.pending = self.pending, ""
        return out


def stop_list(stop):
    """llama-cpp-python's `stop`: None, one string, or a list of strings."""
    if stop is None:
        return []
    if isinstance(stop, str):
        return [stop]
    if isinstance(stop, (list, tuple)) and all(isinstance(s, str) for s in stop):
        return list(stop)
    return None
