#!/usr/bin/env python3
"""Train the byte-level BPE vocabulary on the training text and tokenize every split.

Reads  .train_data/train.txt, .train_data/valid.txt, models/trained/heldout.txt
Writes models/trained/kjv-tokenizer.json  (tokens, token types, merges, special ids)
       .train_data/{train,valid,heldout}.bin  (uint16 little-endian token ids, no BOS)

Usage: python3 tools/train/train_tokenizer.py [--vocab-size 4096]
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpe  # noqa: E402

SPECIALS = [("<s>", "bos"), ("</s>", "eos")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vocab-size", type=int, default=4096)
    ap.add_argument("--data-dir", default=".train_data")
    ap.add_argument("--heldout", default="models/trained/heldout.txt")
    ap.add_argument("--out", default="models/trained/kjv-tokenizer.json")
    args = ap.parse_args()

    def read(path):
        with open(path, encoding="ascii") as f:
            return f.read()

    train_text = read(os.path.join(args.data_dir, "train.txt"))
    t0 = time.time()
    tokens, merges = bpe.train(train_text, args.vocab_size, len(SPECIALS))
    doc = bpe.save(args.out, tokens, merges, SPECIALS)
    print(f"{args.out}: {len(doc['tokens'])} tokens, {len(merges)} merges "
          f"({time.time() - t0:.1f} s)")
    if len(doc["tokens"]) != args.vocab_size:
        sys.exit(f"error: vocabulary has {len(doc['tokens'])} tokens, wanted {args.vocab_size}")

    _, enc = bpe.load(args.out)
    splits = [("train", train_text), ("valid", read(os.path.join(args.data_dir, "valid.txt"))),
              ("heldout", read(args.heldout))]
    for name, text in splits:
        ids = enc.encode(text)
        if enc.decode(ids, doc["tokens"]) != text:
            sys.exit(f"error: {name}: decode(encode(text)) != text")
        out = os.path.join(args.data_dir, name + ".bin")
        np.asarray(ids, dtype="<u2").tofile(out)
        print(f"{out}: {len(ids)} tokens, {len(text) / len(ids):.2f} bytes/token")


if __name__ == "__main__":
    main()
