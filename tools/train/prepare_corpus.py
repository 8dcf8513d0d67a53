#!/usr/bin/env python3
"""Extract the King James Bible from Debian's bible-kjv-text package and split it.

Source: Debian package bible-kjv-text (the text, compressed in /usr/lib/bible.data) read
through the `bible` program of the package bible-kjv (`apt-get install bible-kjv-text`
installs both). The KJV text is public domain (see docs/DEFAULT_MODEL.md).

Output text format: one verse per line without its verse number; each chapter starts with a
heading line ("Genesis 1") followed by an empty line, and ends with an empty line:

    Genesis 1

    In the beginning God created the heaven and the earth.
    And the earth was without form, ...

Splits (by chapter, deterministic):
  heldout : 1 John 1 .. Revelation 22 (the last ~2% of the text)  -> models/trained/heldout.txt
  valid   : every 100th chapter of the rest (model selection only) -> .train_data/valid.txt
  train   : everything else                                         -> .train_data/train.txt

Usage: python3 tools/train/prepare_corpus.py [--out-dir .train_data] [--heldout PATH]
"""
import argparse
import os
import re
import subprocess
import sys

HELDOUT_FIRST_CHAPTER = "1 John 1"
VALID_EVERY = 100
HEADING = re.compile(r"^(?:[123] )?[A-Z][A-Za-z ]* \d+$")
VERSE = re.compile(r"^  (\d+) (.*)$")


def read_bible():
    try:
        raw = subprocess.run(["bible", "-l100000", "Gen1:1-Rev22:21"], check=True,
                             capture_output=True, text=True, encoding="ascii").stdout
    except FileNotFoundError:
        sys.exit("error: the `bible` program is missing: apt-get install -y bible-kjv-text bible-kjv")
    chapters = []  # (heading, [verse text, ...])
    for lineno, line in enumerate(raw.split("\n"), 1):
        if not line:
            continue
        m = VERSE.match(line)
        if m:
            if not chapters:
                sys.exit(f"error: verse before the first chapter heading at output line {lineno}")
            chapters[-1][1].append(m.group(2).strip())
        elif HEADING.match(line):
            chapters.append((line, []))
        else:
            sys.exit(f"error: unexpected line {lineno} in `bible` output: {line!r}")
    n_verses = sum(len(v) for _, v in chapters)
    if len(chapters) != 1189 or n_verses != 31102:
        sys.exit(f"error: expected 1189 chapters / 31102 verses, got {len(chapters)} / {n_verses}")
    return chapters


def render(chapters):
    return "".join(f"{h}\n\n" + "".join(v + "\n" for v in verses) + "\n" for h, verses in chapters)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out-dir", default=".train_data")
    ap.add_argument("--heldout", default="models/trained/heldout.txt")
    args = ap.parse_args()

    chapters = read_bible()
    split = next(i for i, (h, _) in enumerate(chapters) if h == HELDOUT_FIRST_CHAPTER)
    rest, heldout = chapters[:split], chapters[split:]
    valid = [c for i, c in enumerate(rest) if i % VALID_EVERY == VALID_EVERY - 1]
    train = [c for i, c in enumerate(rest) if i % VALID_EVERY != VALID_EVERY - 1]

    os.makedirs(args.out_dir, exist_ok=True)
    os.makedirs(os.path.dirname(args.heldout) or ".", exist_ok=True)
    outputs = [(os.path.join(args.out_dir, "train.txt"), train),
               (os.path.join(args.out_dir, "valid.txt"), valid),
               (args.heldout, heldout)]
    total = 0
    for path, chs in outputs:
        text = render(chs)
        total += len(text)
        with open(path, "w", encoding="ascii", newline="\n") as f:
            f.write(text)
        print(f"{path}: {len(chs)} chapters, {sum(len(v) for _, v in chs)} verses, {len(text)} bytes")
    print(f"heldout share: {len(render(heldout)) / total:.2%}")


if __name__ == "__main__":
    main()
