#!/usr/bin/env python3
"""A batch of prompts, completed by a few Llama objects in parallel threads (one object per
thread: calls on one object take its lock and run one after the other, separate objects run at
the same time). The results are printed in the order of the prompts.

usage: batch.py [MODEL.gguf] [N_WORKERS] [PROMPT...]   (no model or "": the default model)
"""
import concurrent.futures
import sys
import threading

import rocmforge

PROMPTS = ["In the beginning", "And God said", "The LORD is my shepherd", "And it came to pass",
           "Blessed are the meek", "Let there be light"]


def main():
    path = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] else None
    n_workers = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    prompts = sys.argv[3:] or PROMPTS
    models = [rocmforge.Llama(path, n_threads=1) for _ in range(n_workers)]
    local = threading.local()
    free = list(models)
    free_lock = threading.Lock()

    def complete(prompt):
        if not hasattr(local, "llm"):  # each worker thread takes one object for its lifetime
            with free_lock:
                local.llm = free.pop()
        return local.llm(prompt, max_tokens=24, seed=1)

    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=n_workers) as pool:
            for prompt, out in zip(prompts, pool.map(complete, prompts)):
                choice = out["choices"][0]
                print("--- %s (%d tokens, %s)\n%s%s" % (prompt, out["usage"]["completion_tokens"],
                                                      choice["finish_reason"], prompt, choice["text"]))
    finally:
        for m in models:
            m.close()


if __name__ == "__main__":
    try:
        main()
    except rocmforge.RocmforgeError as e:
        sys.exit("error: %s" % e)
