"""Shared by the Python package tests: the default model, the CLI that the results are compared
with, and one Llama loaded for the whole run. meson passes the paths (tests/python/meson.build);
the package is the build tree's copy (PYTHONPATH=<build>/python)."""

import os
import subprocess

import pytest

import rocmforge


def _env_path(name):
    path = os.environ.get(name)
    if not path:
        pytest.exit("%s is not set: run these tests through `meson test -C build python`" % name, 2)
    return path


@pytest.fixture(scope="session")
def model_path():
    return _env_path("RF_TEST_MODEL")


@pytest.fixture(scope="session")
def cli_path():
    return _env_path("RF_TEST_CLI")


@pytest.fixture(scope="session")
def llm(model_path):
    with rocmforge.Llama(model_path) as llm:
        yield llm


# create_completion's parameter -> `rocmforge generate`'s option.
CLI_OPTIONS = {"temperature": "--temp", "top_k": "--top-k", "top_p": "--top-p", "min_p": "--min-p",
               "repeat_penalty": "--repeat-penalty", "frequency_penalty": "--frequency-penalty",
               "presence_penalty": "--presence-penalty", "repeat_last_n": "--repeat-last-n", "seed": "--seed"}


@pytest.fixture(scope="session")
def cli_generate(cli_path, model_path):
    """The text `rocmforge generate` adds to `prompt` with the same sampling values (its stdout is
    the prompt, the generated text and a newline)."""

    def run(prompt, max_tokens, **sampling):
        args = [cli_path, "generate", "-m", model_path, "-p", prompt, "-n", str(max_tokens)]
        for key, value in sampling.items():
            args += [CLI_OPTIONS[key], str(value)]
        out = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True).stdout
        text = out.decode("utf-8", "replace")
        assert text.startswith(prompt) and text.endswith("\n"), text
        return text[len(prompt):-1]

    return run
