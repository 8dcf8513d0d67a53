#!/usr/bin/env python3
"""Train the small KJV LLaMA and export its weights for `rocmforge import`.

Inputs (from prepare_corpus.py + train_tokenizer.py): DATA/{train,valid,heldout}.bin (uint16
token ids), models/trained/kjv-tokenizer.json (BOS id, vocabulary size, sample decoding).

Each training sequence is BOS + n_ctx-1 tokens from a random offset of the training text, as
llama.cpp's perplexity and generate see text (BOS first). The model is evaluated on the
validation split every --eval-every steps; the best checkpoint is exported (early stopping).
Several dropout rates can be tried in one call (--dropout 0.1,0.2): the one with the best
validation loss wins. Everything is seeded: a rerun reproduces the curve within GPU noise.

Outputs in OUT: weights.f32 (all tensors, float32, concatenated), manifest.json (hyper-
parameters + tensor names/shapes/offsets), loss.csv, samples.txt.

Usage (the exact command of docs/DEFAULT_MODEL.md):
  PYTHONUNBUFFERED=1 python3 tools/train/train.py --data .train_data --out $OUT
"""
import argparse
import csv
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpe  # noqa: E402
from model import Llama  # noqa: E402


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=".train_data")
    ap.add_argument("--tokenizer", default="models/trained/kjv-tokenizer.json")
    ap.add_argument("--out", default="train_out")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--n-embd", type=int, default=256)
    ap.add_argument("--n-layer", type=int, default=4)
    ap.add_argument("--n-head", type=int, default=8)
    ap.add_argument("--n-head-kv", type=int, default=2)
    ap.add_argument("--n-ff", type=int, default=448)
    ap.add_argument("--n-ctx", type=int, default=512)
    ap.add_argument("--untied", action="store_true", help="separate output.weight")
    ap.add_argument("--dropout", default="0.1,0.2,0.3", help="comma-separated rates, one run each")
    ap.add_argument("--steps", type=int, default=2500)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--min-lr-frac", type=float, default=0.1)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument("--max-seconds", type=float, default=420, help="safety stop for all runs together")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    return ap.parse_args()


def load_ids(path, device):
    return torch.from_numpy(np.fromfile(path, dtype="<u2").astype(np.int64)).to(device)


def lr_at(step, a):
    if step < a.warmup:
        return a.lr * (step + 1) / a.warmup
    t = (step - a.warmup) / max(1, a.steps - a.warmup)
    return a.lr * (a.min_lr_frac + (1 - a.min_lr_frac) * 0.5 * (1 + math.cos(math.pi * t)))


def batch_of(data, starts, n_ctx, bos):
    idx = starts[:, None] + torch.arange(n_ctx, device=data.device)[None, :]
    y = data[idx]                                   # t[s] .. t[s+n_ctx-1]
    x = torch.cat([torch.full_like(y[:, :1], bos), y[:, :-1]], dim=1)  # BOS, t[s] .. t[s+n_ctx-2]
    return x, y


@torch.no_grad()
def eval_loss(model, data, n_ctx, bos, amp):
    """Mean next-token loss over consecutive windows (each BOS + n_ctx-1 tokens)."""
    model.eval()
    n = (len(data) // n_ctx) * n_ctx
    starts = torch.arange(0, n - n_ctx + 1, n_ctx, device=data.device)
    total, count = 0.0, 0
    for i in range(0, len(starts), 64):
        x, y = batch_of(data, starts[i:i + 64], n_ctx, bos)
        with torch.autocast(data.device.type, dtype=torch.bfloat16, enabled=amp):
            logits = model(x)
        total += F.cross_entropy(logits.float().flatten(0, 1), y.flatten(), reduction="sum").item()
        count += y.numel()
    model.train()
    return total / count


@torch.no_grad()
def llamacpp_perplexity(model, text_ids, n_ctx, bos):
    """llama.cpp's perplexity (-c n_ctx), float32: tokens = [BOS] + text; per chunk the first
    token becomes BOS and tokens first+1..n_ctx-1 are scored, first = n_ctx/2."""
    model.eval()
    toks = torch.cat([torch.tensor([bos], device=text_ids.device), text_ids])
    n_chunk = len(toks) // n_ctx
    first = n_ctx // 2
    nll, cnt = 0.0, 0
    for c in range(n_chunk):
        chunk = toks[c * n_ctx:(c + 1) * n_ctx].clone()
        chunk[0] = bos
        logp = model(chunk[None]).float().log_softmax(-1)[0]
        tgt = chunk[first + 1:]
        nll -= logp[first:n_ctx - 1].gather(1, tgt[:, None]).sum().item()
        cnt += len(tgt)
    model.train()
    return math.exp(nll / cnt), n_chunk


@torch.no_grad()
def sample(model, enc, tokens, prompt, n, bos, gen, temp=0.8, top_k=40):
    model.eval()
    ids = [bos] + enc.encode(prompt)
    for _ in range(n):
        x = torch.tensor([ids[-model.c["n_ctx"]:]], device=model.rope_cos.device)
        logits = model(x)[0, -1].float() / temp
        v, i = logits.topk(top_k)
        p = v.softmax(-1).cpu()
        ids.append(int(i[torch.multinomial(p, 1, generator=gen)].item()))
    model.train()
    return enc.decode(ids[1:], tokens)


def train_one(a, cfg, data, log_rows, deadline):
    torch.manual_seed(a.seed)
    model = Llama(cfg).to(a.device)
    decay = [p for p in model.parameters() if p.dim() == 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    extra = {"fused": True} if a.device == "cuda" else {}
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": a.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95), eps=1e-8, **extra)
    gen = torch.Generator().manual_seed(a.seed)
    amp = a.device == "cuda"
    n_start = len(data["train"]) - cfg["n_ctx"]
    best = (float("inf"), -1, None)
    running, t0 = 0.0, time.time()
    for step in range(a.steps + 1):
        if step % a.eval_every == 0 or step == a.steps:
            vl = eval_loss(model, data["valid"], cfg["n_ctx"], cfg["bos"], amp)
            tl = float(running) / a.eval_every if step else float("nan")
            running = 0.0
            if vl < best[0]:
                best = (vl, step, {k: v.detach().clone() for k, v in model.state_dict().items()})
            el = time.time() - t0
            print(f"dropout {cfg['dropout']} step {step:5d}  train {tl:.4f}  valid {vl:.4f}  "
                  f"lr {lr_at(min(step, a.steps - 1), a):.2e}  {el:.0f}s", flush=True)
            log_rows.append([cfg["dropout"], step, f"{tl:.5f}", f"{vl:.5f}", f"{el:.1f}"])
        if step == a.steps:
            break
        if time.time() > deadline:
            print(f"WARNING: this run's share of --max-seconds is spent at step {step}: stopping early "
                  "(the run is then not reproducible step for step)", flush=True)
            break
        for g in opt.param_groups:
            g["lr"] = lr_at(step, a)
        starts = torch.randint(0, n_start, (a.batch,), generator=gen).to(a.device)
        x, y = batch_of(data["train"], starts, cfg["n_ctx"], cfg["bos"])
        with torch.autocast(torch.device(a.device).type, dtype=torch.bfloat16, enabled=amp):
            logits = model(x)
        loss = F.cross_entropy(logits.float().flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        running = running + loss.detach()  # stays on the device: no sync per step
    model.load_state_dict(best[2])
    return model, best[0], best[1]


def export(model, cfg, out_dir, extra):
    tensors = model.gguf_tensors()
    entries, offset = [], 0
    with open(os.path.join(out_dir, "weights.f32"), "wb") as f:
        for name, t in tensors:
            buf = t.numpy().astype("<f4").tobytes()
            f.write(buf)
            entries.append({"name": name, "shape": list(t.shape), "offset": offset, "nbytes": len(buf)})
            offset += len(buf)
    manifest = {"format": "rocmforge-train-v1", "dtype": "f32", "weights_file": "weights.f32",
                "hparams": cfg, "tensors": entries, **extra}
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    n_params = sum(t.numel() for _, t in tensors)
    print(f"exported {len(tensors)} tensors, {n_params} parameters, {offset} bytes")
    return n_params


def main():
    a = parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = True
    tok_doc, enc = bpe.load(a.tokenizer)
    data = {s: load_ids(os.path.join(a.data, s + ".bin"), a.device) for s in ("train", "valid", "heldout")}
    print(f"device {a.device} torch {torch.__version__}; tokens: " +
          ", ".join(f"{k} {len(v)}" for k, v in data.items()), flush=True)
    base_cfg = {"n_vocab": len(tok_doc["tokens"]), "n_embd": a.n_embd, "n_layer": a.n_layer,
                "n_head": a.n_head, "n_head_kv": a.n_head_kv, "head_dim": a.n_embd // a.n_head,
                "n_ff": a.n_ff, "n_ctx": a.n_ctx, "rope_base": 10000.0, "rms_eps": 1e-5,
                "tied": not a.untied, "bos": tok_doc["bos_token_id"]}

    t_start = time.time()
    rows, results = [], []
    rates = [float(x) for x in a.dropout.split(",")]
    for i, d in enumerate(rates):
        deadline = t_start + a.max_seconds * (i + 1) / len(rates)
        model, vl, step = train_one(a, dict(base_cfg, dropout=d), data, rows, deadline)
        print(f"dropout {d}: best valid loss {vl:.4f} at step {step}", flush=True)
        results.append((vl, d, step, model))
    vl, d, step, model = min(results, key=lambda r: r[0])
    model = model.float()
    with open(os.path.join(a.out, "loss.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["dropout", "step", "train_loss", "valid_loss", "seconds"])
        w.writerows(rows)

    # What `rocmforge perplexity -c 128` must print for the F32 and F16-rounded weights.
    ppl32, n_chunk = llamacpp_perplexity(model, data["heldout"], 128, base_cfg["bos"])
    m16 = Llama(dict(base_cfg, dropout=0.0)).to(a.device)
    m16.load_state_dict({k: (v.half().float() if v.dim() == 2 else v) for k, v in model.state_dict().items()})
    ppl16, _ = llamacpp_perplexity(m16, data["heldout"], 128, base_cfg["bos"])
    print(f"heldout perplexity (llama.cpp, -c 128, {n_chunk} chunks): f32 {ppl32:.4f}  f16 {ppl16:.4f}")

    gen = torch.Generator().manual_seed(a.seed)
    with open(os.path.join(a.out, "samples.txt"), "w") as f:
        for p in ("In the beginning", "And Jesus said", "The LORD is my shepherd"):
            s = sample(model, enc, tok_doc["tokens"], p, 64, base_cfg["bos"], gen)
            print("--- sample ---\n" + s, flush=True)
            f.write(s + "\n\n")
    export(model, dict(base_cfg, dropout=d), a.out,
           {"best_step": step, "best_valid_loss": vl, "heldout_ppl_c128_f32": ppl32,
            "heldout_ppl_c128_f16": ppl16, "seed": a.seed, "args": vars(a)})
    print(f"total {time.time() - t_start:.0f}s")


if __name__ == "__main__":
    main()
