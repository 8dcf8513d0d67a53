#!/usr/bin/env python3
"""A chat loop: each line you type is a user turn; the answer streams back and the history is
kept for the next turn. Ctrl-C during an answer stops that answer; Ctrl-D (or the end of the
input) ends the chat.

usage: chat.py [MODEL.gguf] [MAX_TOKENS] [TURN...]   (no model or "": the default model)
TURNs given: those are the user's turns, nothing is read. The model's chat template is used; a
model without one (the default model) gets ChatML.
  PYTHONPATH=build/python python3 examples/python/chat.py build/models/default.gguf
"""
import sys

import rocmforge

SYSTEM = "You answer in the words of the King James Bible."


def main():
    path = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] else None
    max_tokens = int(sys.argv[2]) if len(sys.argv) > 2 else 48
    with rocmforge.Llama(path, seed=7) as llm:
        if llm.chat_template is None:
            llm.chat_format = "chatml"
        history = [{"role": "system", "content": SYSTEM}]
        turns = iter(sys.argv[3:]) if len(sys.argv) > 3 else None
        interactive = turns is None and sys.stdin.isatty()
        while True:
            if interactive:
                print("> ", end="", flush=True)
            line = next(turns, None) if turns is not None else sys.stdin.readline()
            if not line:
                break
            if turns is not None:
                print("> " + line)
            history.append({"role": "user", "content": line.rstrip("\n")})
            answer = []
            try:
                for chunk in llm.create_chat_completion(history, max_tokens=max_tokens, stream=True):
                    piece = chunk["choices"][0]["delta"].get("content", "")
                    answer.append(piece)
                    print(piece, end="", flush=True)
            except KeyboardInterrupt:
                print(" [stopped]", end="")
            print()
            history.append({"role": "assistant", "content": "".join(answer)})
        print("%d turns" % (len(history) // 2), file=sys.stderr)


if __name__ == "__main__":
    try:
        main()
    except rocmforge.RocmforgeError as e:
        sys.exit("error: %s" % e)
    except KeyboardInterrupt:
        print()
