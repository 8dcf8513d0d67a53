#!/usr/bin/env python3
"""Plot loss.csv of train.py (train and validation loss per dropout run) to a PNG.

Usage: python3 tools/train/plot_loss.py models/trained/loss.csv models/trained/loss.png
Needs matplotlib (Debian: apt-get install python3-matplotlib).
"""
import csv
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    runs = {}
    with open(sys.argv[1], newline="") as f:
        for row in csv.DictReader(f):
            r = runs.setdefault(row["dropout"], {"step": [], "train": [], "valid": []})
            r["step"].append(int(row["step"]))
            r["train"].append(float(row["train_loss"]))
            r["valid"].append(float(row["valid_loss"]))
    fig, ax = plt.subplots(figsize=(8, 5), dpi=100)
    for i, (d, r) in enumerate(runs.items()):
        color = f"C{i}"
        ax.plot(r["step"], r["train"], color=color, linestyle="--", label=f"train, dropout {d}")
        ax.plot(r["step"], r["valid"], color=color, label=f"valid, dropout {d}")
        best = min(range(len(r["valid"])), key=r["valid"].__getitem__)
        ax.plot([r["step"][best]], [r["valid"][best]], "o", color=color)
    ax.set_ylim(1.5, 6)
    ax.set_xlabel("step (64 x 512 tokens)")
    ax.set_ylabel("cross-entropy (nats/token)")
    ax.set_title("KJV tiny llama (3.1M params): train loss (with dropout) and validation loss")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(sys.argv[2])
    print(f"wrote {sys.argv[2]}")


if __name__ == "__main__":
    main()
