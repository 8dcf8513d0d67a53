#!/usr/bin/env python3
"""Writes rocmforge_commit.h: the template with @VCS_TAG@ replaced by
`git describe --always --abbrev=40 --dirty` ("unknown" outside a git checkout).

Meson's vcs_tag runs on every build, so ninja never had nothing to do. This script instead
writes a depfile naming what the commit and the dirty state depend on (HEAD, the branch's ref,
packed refs, the index and every tracked file): ninja reruns it only when one of those changed,
and since the header is rewritten only when its text changes (restat), nothing is rebuilt then
unless the commit or the dirty state really moved.

Usage: commit_header.py SOURCE_ROOT TEMPLATE OUTPUT DEPFILE
"""
import os
import subprocess
import sys


def git(root, *args):
    # --no-optional-locks: describe must not refresh the index, which would make the index
    # (one of our dependencies) newer than the output and rerun this on the next build.
    return subprocess.run(["git", "-C", root, "--no-optional-locks", *args],
                          capture_output=True, text=True, check=True).stdout


def git_state(root):
    """The describe string and the files it depends on; ("unknown", []) without git."""
    try:
        tag = git(root, "describe", "--always", "--abbrev=40", "--dirty").strip()
        paths = ["HEAD", "index", "packed-refs"]
        branch = subprocess.run(["git", "-C", root, "symbolic-ref", "-q", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        if branch:
            paths.append(branch)
        args = [a for p in paths for a in ("--git-path", p)]
        deps = [os.path.join(root, p) for p in git(root, "rev-parse", *args).splitlines()]
        deps += [os.path.join(root, p) for p in git(root, "ls-files", "-z").split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        return "unknown", []
    # A dependency that does not exist would make ninja rerun this on every build.
    return tag, [d for d in deps if os.path.isfile(d)]


def main():
    root, template, output, depfile = sys.argv[1:5]
    tag, deps = git_state(root)
    with open(template, encoding="utf-8") as f:
        text = f.read().replace("@VCS_TAG@", tag)
    try:
        with open(output, encoding="utf-8") as f:
            unchanged = f.read() == text
    except OSError:
        unchanged = False
    if not unchanged:
        with open(output + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(output + ".tmp", output)
    escape = lambda p: p.replace("\\", "\\\\").replace(" ", "\\ ").replace("#", "\\#").replace("$", "$$")
    with open(depfile, "w", encoding="utf-8") as f:
        f.write(escape(output) + ":" + "".join(" \\\n " + escape(d) for d in deps) + "\n")


if __name__ == "__main__":
    main()
