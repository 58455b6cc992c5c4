#!/bin/sh
# The public research code that `make check-torch` and export_corpus.py import at run
# time, cloned at the commits the corpus was made from into DIR (default build/upstream).
# A repository whose variable (TTT_LACT_DIR, TTT_TTT_LM_DIR, TTT_VITTT_DIR) is already
# set is not fetched. None of this code is part of the ttt repository.
set -eu
dir=${1:-build/upstream}
mkdir -p "$dir"

fetch() { # VAR NAME REPOSITORY COMMIT
  eval "given=\${$1:-}"
  if [ -n "$given" ]; then
    [ -d "$given" ] || { echo "fetch_upstream: $1=$given is not a directory" >&2; exit 1; }
    return
  fi
  if [ ! -d "$dir/$2/.git" ]; then
    git clone -q "https://github.com/$3.git" "$dir/$2" || {
      echo "fetch_upstream: cannot clone $3; set $1 to a checkout of it" >&2; exit 1; }
  fi
  git -C "$dir/$2" checkout -q "$4" || {
    echo "fetch_upstream: $dir/$2 has no commit $4" >&2; exit 1; }
}

fetch TTT_LACT_DIR LaCT a1600012888/LaCT 1f84d479fee89e34c58d74a0cf399c2b70564845
fetch TTT_TTT_LM_DIR ttt-lm-pytorch test-time-training/ttt-lm-pytorch cd831db10c8c9a0f6340f02da5613316a8a92b67
fetch TTT_VITTT_DIR ViTTT LeapLabTHU/ViTTT e3477587d099e6b9e83e9e7c80b1b999e0989a20
