#!/bin/sh
# Runs compare_with_jinja2.py with Debian's python3 and its python3-jinja2 (scripts/setup.sh
# --all installs it); 77 (skipped) when they are missing.
if ! /usr/bin/python3 -c 'import jinja2' 2>/dev/null; then
    echo "python3-jinja2 is not installed (scripts/setup.sh --all installs it): skipped"
    exit 77
fi
exec /usr/bin/python3 "$(dirname "$0")/compare_with_jinja2.py" "$@"
