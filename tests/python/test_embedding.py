"""Embeddings through rocmforge.Llama: the same vector as `rocmforge embed`, unit length, lists
embedded one by one, OpenAI's response shape, and bad arguments."""

import json
import math
import subprocess

import pytest

import rocmforge

TEXT = "In the beginning God created the heaven and the earth."


def cli_embed(cli_path, model_path, text, *extra):
    out = subprocess.run([cli_path, "embed", "-m", model_path, "-p", text, *extra], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)["embedding"]


def norm(v):
    return math.sqrt(sum(x * x for x in v))


def test_embed_equals_cli(llm, cli_path, model_path):
    ours = llm.embed(TEXT)
    assert len(ours) == 256
    assert max(abs(a - b) for a, b in zip(ours, cli_embed(cli_path, model_path, TEXT))) < 1e-6
    last = llm.embed(TEXT, pooling="last", normalize=False)
    assert max(abs(a - b) for a, b in zip(last, cli_embed(cli_path, model_path, TEXT, "--pooling", "last",
                                                          "--no-normalize"))) < 1e-5
    assert abs(norm(ours) - 1) < 1e-6
    assert abs(norm(last) - 1) > 1e-3


def test_list_is_each_alone_and_a_generation_before_changes_nothing(llm):
    alone = llm.embed("And God said")
    llm("In the beginning", max_tokens=8, temperature=0)  # leaves its tokens on the context
    both = llm.embed([TEXT, "And God said"])
    assert both[1] == alone
    assert both[0] == llm.embed(TEXT)
    assert sum(a * b for a, b in zip(*both)) < 0.9999
    vectors, count = llm.embed([TEXT, TEXT], return_count=True)
    assert vectors[0] == vectors[1]
    assert count == 2 * len(llm.tokenize(TEXT.encode()))


def test_create_embedding_shape(llm):
    r = llm.create_embedding(["a", "b"], model="m")
    assert r["object"] == "list" and r["model"] == "m"
    assert [d["index"] for d in r["data"]] == [0, 1]
    assert all(d["object"] == "embedding" and len(d["embedding"]) == 256 for d in r["data"])
    assert r["usage"]["prompt_tokens"] == r["usage"]["total_tokens"] > 0
    assert llm.create_embedding("a")["data"][0]["embedding"] == llm.embed("a")


def test_embed_bad_arguments(llm):
    for bad in ([], 5, None, [1, 2]):
        with pytest.raises(rocmforge.InvalidArgumentError):
            llm.embed(bad)
    with pytest.raises(rocmforge.InvalidArgumentError):
        llm.embed("a", pooling="max")
    with pytest.raises(rocmforge.InvalidArgumentError):
        llm.embed("a", pooling=["mean"])
    long = "the " * 2000
    with pytest.raises(rocmforge.InvalidArgumentError):
        llm.embed(long, truncate=False)
    assert len(llm.embed(long)) == 256  # truncated to the context
