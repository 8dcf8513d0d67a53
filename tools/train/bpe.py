"""Byte-level BPE (GPT-2 style) in pure Python: training, encoding, saving.

The encoder reproduces llama.cpp's tokenizer for tokenizer.ggml.model = "gpt2",
tokenizer.ggml.pre = "gpt-2" (llm_tokenizer_bpe in src/llama-vocab.cpp):
  1. pre-tokenize with the GPT-2 regex
       's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+
     (llama.cpp's hand-written splitter for this regex also ends with the plain \\s+ case);
  2. map each UTF-8 byte of a piece to one printable character (GPT-2's bytes_to_unicode);
  3. merge adjacent symbols, always the pair of lowest merge rank, leftmost on ties.
Our corpus is ASCII, where \\p{L} = [A-Za-z] and \\p{N} = [0-9]; the regex below is only used on
ASCII text (encode() refuses anything else) so the Python classes match Unicode's exactly.
"""
import json
import re
from operator import itemgetter

GPT2_SPLIT_ASCII = re.compile(
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")


def bytes_to_unicode():
    """GPT-2's reversible map from the 256 byte values to printable unicode characters."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


BYTE_TO_CHAR = bytes_to_unicode()
CHAR_TO_BYTE = {c: b for b, c in BYTE_TO_CHAR.items()}


def check_ascii(text):
    # \s in Python also matches \x1c-\x1f, which Unicode does not call white space.
    bad = next((i for i, ch in enumerate(text)
                if not (ch == "\n" or " " <= ch <= "~")), None)
    if bad is not None:
        raise ValueError(f"text has a non-printable-ASCII character {text[bad]!r} at offset {bad}")


def pretokenize(text):
    check_ascii(text)
    return GPT2_SPLIT_ASCII.findall(text)


def to_symbols(piece):
    return "".join(BYTE_TO_CHAR[b] for b in piece.encode("utf-8"))


def train(text, vocab_size, n_special, log=print):
    """Returns (tokens, merges): tokens[0:256] are the byte symbols, then one token per new merge
    result. Stops when len(tokens) + n_special == vocab_size. Deterministic: ties in pair count
    go to the pair seen first (dict insertion order, which depends only on the text)."""
    word_count = {}
    for piece in pretokenize(text):
        w = to_symbols(piece)
        word_count[w] = word_count.get(w, 0) + 1
    words = [list(w) for w in word_count]
    freqs = list(word_count.values())

    pair_count = {}
    pair_words = {}
    for wi, (syms, f) in enumerate(zip(words, freqs)):
        for a, b in zip(syms, syms[1:]):
            pair_count[(a, b)] = pair_count.get((a, b), 0) + f
            pair_words.setdefault((a, b), set()).add(wi)

    tokens = [BYTE_TO_CHAR[b] for b in range(256)]
    known = set(tokens)
    merges = []
    while len(tokens) + n_special < vocab_size and pair_count:
        best, count = max(pair_count.items(), key=itemgetter(1))  # first max in dict order
        if count < 2:
            break
        a, b = best
        merged = a + b
        merges.append(best)
        if merged not in known:  # a later merge can rebuild an existing string: no new token
            known.add(merged)
            tokens.append(merged)
        for wi in sorted(pair_words.pop(best, ())):
            syms, f = words[wi], freqs[wi]
            for p in zip(syms, syms[1:]):  # remove this word's old pairs
                pair_count[p] -= f
                if pair_count[p] == 0:
                    del pair_count[p]
                if p != best and p in pair_words:
                    pair_words[p].discard(wi)
            out, i = [], 0
            while i < len(syms):
                if i + 1 < len(syms) and syms[i] == a and syms[i + 1] == b:
                    out.append(merged)
                    i += 2
                else:
                    out.append(syms[i])
                    i += 1
            words[wi] = out
            for p in zip(out, out[1:]):
                pair_count[p] = pair_count.get(p, 0) + f
                pair_words.setdefault(p, set()).add(wi)
        if len(merges) % 500 == 0:
            log(f"  {len(merges)} merges, {len(tokens)} tokens, last {merged!r}")
    return tokens, merges


class Encoder:
    def __init__(self, tokens, merges):
        self.token_id = {t: i for i, t in enumerate(tokens)}
        self.rank = {tuple(m): r for r, m in enumerate(merges)}
        self.cache = {}

    def encode_piece(self, piece):
        ids = self.cache.get(piece)
        if ids is not None:
            return ids
        syms = list(to_symbols(piece))
        while len(syms) > 1:
            best_rank, best_i = None, -1
            for i in range(len(syms) - 1):
                r = self.rank.get((syms[i], syms[i + 1]))
                if r is not None and (best_rank is None or r < best_rank):
                    best_rank, best_i = r, i
            if best_rank is None:
                break
            syms[best_i:best_i + 2] = [syms[best_i] + syms[best_i + 1]]
        ids = [self.token_id[s] for s in syms]
        self.cache[piece] = ids
        return ids

    def encode(self, text):
        out = []
        for piece in pretokenize(text):
            out.extend(self.encode_piece(piece))
        return out

    def decode(self, ids, tokens):
        return bytes(CHAR_TO_BYTE[c] for i in ids for c in tokens[i]).decode("utf-8", "replace")


def save(path, tokens, merges, specials):
    """specials: list of (text, role) appended after the normal tokens, role 'bos' / 'eos'."""
    all_tokens = tokens + [s for s, _ in specials]
    doc = {
        "model": "gpt2",
        "pre": "gpt-2",
        "tokens": all_tokens,
        # llama.cpp token types: 1 = normal, 3 = control
        "token_type": [1] * len(tokens) + [3] * len(specials),
        "merges": [f"{a} {b}" for a, b in merges],
        "add_bos_token": True,
        "add_eos_token": False,
    }
    for text, role in specials:
        doc[f"{role}_token_id"] = all_tokens.index(text)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=0)
        f.write("\n")
    return doc


def load(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    merges = [tuple(m.split(" ")) for m in doc["merges"]]
    return doc, Encoder(doc["tokens"], merges)
