#!/usr/bin/env python3
"""A streamed completion: the text is printed as the model produces it.

usage: stream.py [MODEL.gguf] [PROMPT] [MAX_TOKENS]   (no model or "": the default model)
From a build folder: PYTHONPATH=build/python python3 examples/python/stream.py build/models/default.gguf
"""
import sys

import rocmforge


def main():
    path = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] else None
    prompt = sys.argv[2] if len(sys.argv) > 2 else "In the beginning"
    max_tokens = int(sys.argv[3]) if len(sys.argv) > 3 else 64
    with rocmforge.Llama(path) as llm:
        print(prompt, end="", flush=True)
        finish = None
        try:
            for chunk in llm(prompt, max_tokens=max_tokens, seed=42, stream=True):
                choice = chunk["choices"][0]
                print(choice["text"], end="", flush=True)
                finish = choice["finish_reason"]
        except KeyboardInterrupt:
            finish = "interrupted"
        print("\n[%s]" % finish, file=sys.stderr)


if __name__ == "__main__":
    try:
        main()
    except rocmforge.RocmforgeError as e:
        sys.exit("error: %s" % e)
