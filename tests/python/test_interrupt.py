"""Ctrl-C during a generation: KeyboardInterrupt stops it after the step it arrived in and
leaves the Llama usable. Run in a child interpreter with Python's own SIGINT handler, the
signal sent while the library decodes (its decode call wrapped to send it on the 10th step)."""

import os
import subprocess
import sys

CHILD = r'''
import os, signal, sys, threading
import rocmforge

llm = rocmforge.Llama(sys.argv[1])
reference = llm("In the beginning", max_tokens=64, seed=3)["choices"][0]["text"]
lib = llm._lib.lib
real_decode = lib.rocmforge_decode
calls = [0]

def decode_then_ctrl_c(ctx, batch):
    calls[0] += 1
    status = real_decode(ctx, batch)
    if calls[0] == 10:
        os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C in the terminal sends
    return status

messages = [{"role": "user", "content": "Who made the heaven and the earth?"}]
runs = {
    "call": lambda: llm("In the beginning", max_tokens=300, seed=3),
    "stream": lambda: [c for c in llm("In the beginning", max_tokens=300, seed=3, stream=True)],
    "chat": lambda: llm.create_chat_completion(messages, max_tokens=300, seed=3, stream=False),
}
llm.chat_format = "chatml"
for name, run in runs.items():
    calls[0] = 0
    lib.rocmforge_decode = decode_then_ctrl_c
    try:
        run()
        print(name, "ran to the end")
    except KeyboardInterrupt:
        print(name, "interrupted after decode", calls[0])
    finally:
        lib.rocmforge_decode = real_decode
    # Usable again: the same text as before, from this thread and from another one.
    assert llm("In the beginning", max_tokens=64, seed=3)["choices"][0]["text"] == reference, name
    other = []
    t = threading.Thread(target=lambda: other.append(llm("In the beginning", max_tokens=64, seed=3)))
    t.start()
    t.join(60)
    assert other and other[0]["choices"][0]["text"] == reference, name
print("usable")
'''


def test_ctrl_c_stops_the_generation_and_leaves_the_object_usable(model_path):
    proc = subprocess.run([sys.executable, "-c", CHILD, model_path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=os.environ, timeout=120)
    out = proc.stdout.decode()
    assert proc.returncode == 0, out + proc.stderr.decode()
    for name in ("call", "stream", "chat"):
        assert "%s interrupted after decode 10\n" % name in out, out
    assert out.endswith("usable\n")
