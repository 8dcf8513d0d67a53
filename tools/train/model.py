"""A small LLaMA in PyTorch whose math is exactly what llama.cpp (and ROCmForge) compute for
general.architecture = "llama", so the weights export to GGUF without any permutation:

  x = token_embd[ids]
  per layer: h = x + Wo · attn(rope(Wq · rmsnorm(x)), rope(Wk · rmsnorm(x)), Wv · rmsnorm(x))
             x = h + Wdown · (silu(Wgate · rmsnorm(h)) * Wup · rmsnorm(h))
  logits = output · rmsnorm(x)           (output = token_embd when tied)

RoPE is llama.cpp's NORMAL mode: adjacent pairs (x[2i], x[2i+1]) of each head rotate by
pos * base^(-2i/head_dim). (HF checkpoints use the NEOX-style half split instead, which is why
llama.cpp's converter permutes their Q/K rows; we train in the GGUF layout directly.)
GQA: query head h reads kv head h // (n_head / n_head_kv), as in llama.cpp.
Linear weights are PyTorch [out, in] = GGUF ne [in, out], the same bytes.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight


def rope_tables(n_ctx, head_dim, base, device):
    inv_freq = base ** (-torch.arange(0, head_dim, 2, device=device, dtype=torch.float64) / head_dim)
    ang = torch.arange(n_ctx, device=device, dtype=torch.float64)[:, None] * inv_freq[None, :]
    return ang.cos().float(), ang.sin().float()  # [n_ctx, head_dim/2]


def apply_rope(x, cos, sin):
    # x: [B, H, T, D]; rotate pairs (2i, 2i+1)
    B, H, T, D = x.shape
    xp = x.float().reshape(B, H, T, D // 2, 2)
    x0, x1 = xp[..., 0], xp[..., 1]
    c, s = cos[:T], sin[:T]
    out = torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1)
    return out.reshape(B, H, T, D).type_as(x)


def causal_attention(q, k, v):
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    T = q.shape[2]
    att = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    mask = torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1)
    return att.masked_fill(mask, float("-inf")).softmax(-1) @ v


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        d, hd = c["n_embd"], c["head_dim"]
        self.n_head, self.n_head_kv, self.head_dim = c["n_head"], c["n_head_kv"], hd
        self.attn_norm = RMSNorm(d, c["rms_eps"])
        self.attn_q = nn.Linear(d, c["n_head"] * hd, bias=False)
        self.attn_k = nn.Linear(d, c["n_head_kv"] * hd, bias=False)
        self.attn_v = nn.Linear(d, c["n_head_kv"] * hd, bias=False)
        self.attn_output = nn.Linear(c["n_head"] * hd, d, bias=False)
        self.ffn_norm = RMSNorm(d, c["rms_eps"])
        self.ffn_gate = nn.Linear(d, c["n_ff"], bias=False)
        self.ffn_up = nn.Linear(d, c["n_ff"], bias=False)
        self.ffn_down = nn.Linear(c["n_ff"], d, bias=False)
        self.drop = nn.Dropout(c.get("dropout", 0.0))

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        h = self.attn_norm(x)
        q = self.attn_q(h).view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        k = self.attn_k(h).view(B, T, self.n_head_kv, self.head_dim).transpose(1, 2)
        v = self.attn_v(h).view(B, T, self.n_head_kv, self.head_dim).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        group = self.n_head // self.n_head_kv
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        a = causal_attention(q, k, v).transpose(1, 2).reshape(B, T, -1)
        x = x + self.drop(self.attn_output(a))
        h = self.ffn_norm(x)
        return x + self.drop(self.ffn_down(F.silu(self.ffn_gate(h)) * self.ffn_up(h)))


class Llama(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.token_embd = nn.Embedding(c["n_vocab"], c["n_embd"])
        self.blocks = nn.ModuleList(Block(c) for _ in range(c["n_layer"]))
        self.output_norm = RMSNorm(c["n_embd"], c["rms_eps"])
        self.output = None if c["tied"] else nn.Linear(c["n_embd"], c["n_vocab"], bias=False)
        self.drop = nn.Dropout(c.get("dropout", 0.0))
        cos, sin = rope_tables(c["n_ctx"], c["head_dim"], c["rope_base"], None)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)
        self.reset_parameters()

    def reset_parameters(self):
        std = 0.02
        for name, p in self.named_parameters():
            if p.dim() == 2:
                s = std / math.sqrt(2 * self.c["n_layer"]) if name.endswith(("attn_output.weight", "ffn_down.weight")) else std
                nn.init.normal_(p, mean=0.0, std=s)

    def forward(self, ids):
        x = self.drop(self.token_embd(ids))
        for b in self.blocks:
            x = b(x, self.rope_cos, self.rope_sin)
        x = self.output_norm(x)
        w = self.token_embd.weight if self.output is None else self.output.weight
        return x @ w.t().to(x.dtype) if x.dtype != w.dtype else F.linear(x, w)

    def gguf_tensors(self):
        """(gguf name, float32 tensor) in llama.cpp's tensor order."""
        out = [("token_embd.weight", self.token_embd.weight)]
        for i, b in enumerate(self.blocks):
            for n in ("attn_norm", "attn_q", "attn_k", "attn_v", "attn_output",
                      "ffn_norm", "ffn_gate", "ffn_up", "ffn_down"):
                out.append((f"blk.{i}.{n}.weight", getattr(b, n).weight))
        out.append(("output_norm.weight", self.output_norm.weight))
        if self.output is not None:
            out.append(("output.weight", self.output.weight))
        return [(n, t.detach().float().cpu().contiguous()) for n, t in out]
