"""Runs the Python package tests with pytest (Debian: python3-pytest), as `meson test python`
does; exits 77 (meson: skipped) with a message when this interpreter has no pytest."""

import importlib.util
import os
import sys

if importlib.util.find_spec("pytest") is None:
    print("skipped: %s has no pytest module (Debian 12: apt-get install python3-pytest, or scripts/setup.sh --all)"
          % sys.executable)
    sys.exit(77)

import pytest  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
# No cache folder in the source tree; -rs lists skipped tests with their reasons.
sys.exit(pytest.main(["-p", "no:cacheprovider", "-rs", "-v", here] + sys.argv[1:]))
