#!/bin/sh
# Debian 12's PyTorch 1.13 (python3-torch, python3-onnx), unpacked into a folder instead of
# installed: the corpus's `ts113` column (issue 47) is exported with it, and installing it
# system-wide would change which tests run on the machine. With it python3-torchvision
# (Debian's 0.14, which timm needs), and from PyPI, into DIR/pip, what the upstream
# modules import that Debian 12 does not package, at versions that run on torch 1.13:
# transformers 4.44 (ttt-lm-pytorch, LaCT's lact_llm), einops, and timm 0.4.12 (the
# version ViT³'s README names).
#
#   python/scripts/debian_torch113.sh [DIR]        (default build/torch113)
#
# On Debian 12 it downloads (`apt-get download`) the packages that
# `apt-get install --no-install-recommends python3-torch python3-onnx python3-torchvision`
# would install, less those already installed, and unpacks each with `dpkg -x` into
# DIR/root; then `pip install --target DIR/pip --no-deps` the pinned PyPI packages below.
# Nothing is installed system-wide and no maintainer script runs. When DIR already gives
# Debian's /usr/bin/python3 a torch 1.13 and the rest, it does nothing. It prints the
# environment to run /usr/bin/python3 with, e.g.
#
#   eval "$(python/scripts/debian_torch113.sh)"
#   /usr/bin/python3 python/scripts/export_corpus.py --exporter-set torch113 ...
set -eu
dir=${1:-build/torch113}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
root=$dir/root
python=/usr/bin/python3
debian_packages="python3-torch python3-onnx python3-torchvision"
# PyPI, pinned; --no-deps: numpy, requests, yaml and the rest are Debian's.
pypi_packages="transformers==4.44.2 tokenizers==0.19.1 huggingface_hub==0.24.7
  safetensors==0.4.5 einops==0.8.0 timm==0.4.12 regex==2026.12.2 tqdm==4.70.1
  packaging==26.4 filelock==4.3.2 fsspec==2026.9.0"

environment() {
  echo "export PYTHONPATH=$root/usr/lib/python3/dist-packages:$dir/pip${PYTHONPATH:+:$PYTHONPATH}"
  echo "export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu:$root/usr/lib:$root/usr/lib/x86_64-linux-gnu/blas:$root/usr/lib/x86_64-linux-gnu/lapack${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "export TTT_TORCH113_PYTHON=$python"
}

works() {
  (eval "$(environment)"
   "$python" -c 'import torch, torchvision, onnx, numpy, transformers, einops, timm
from transformers.utils import is_torch_available
assert torch.__version__.startswith("1.13"), torch.__version__
assert is_torch_available()' \
     >/dev/null 2>&1)
}

if works; then
  environment
  exit 0
fi

grep -q '^VERSION_ID="12"' /etc/os-release 2>/dev/null || {
  echo "debian_torch113: this is not Debian 12; its python3-torch 1.13 needs Debian 12's libraries" >&2
  exit 1; }
[ -x "$python" ] || { echo "debian_torch113: no $python" >&2; exit 1; }

# The packages apt would install now (an `Inst name [old]` line is an upgrade of a
# package that is installed already: skipped).
# shellcheck disable=SC2086
packages=$(apt-get install -s --no-install-recommends $debian_packages |
           awk '$1 == "Inst" && $3 !~ /^\[/ { print $2 }')
[ -n "$packages" ] || { echo "debian_torch113: apt-get has nothing to install" >&2; exit 1; }
mkdir -p "$dir/debs" "$root"
# shellcheck disable=SC2086
(cd "$dir/debs" && apt-get download -qq $packages >&2) || {
  echo "debian_torch113: apt-get download failed (run apt-get update?)" >&2; exit 1; }
for deb in "$dir"/debs/*.deb; do
  dpkg -x "$deb" "$root"
done

# An absolute symbolic link points into the system's /usr: make it point into the folder
# where its target was unpacked there.
find "$root" -type l | while read -r link; do
  target=$(readlink "$link")
  case $target in
    /*) if [ -e "$root$target" ] || [ -L "$root$target" ]; then ln -sfn "$root$target" "$link"; fi ;;
  esac
done

# shellcheck disable=SC2086
"$python" -m pip install -q --disable-pip-version-check --target "$dir/pip" --upgrade \
  --no-deps --only-binary=:all: $pypi_packages >&2 || {
  echo "debian_torch113: pip install --target $dir/pip failed" >&2; exit 1; }

if works; then
  environment
  exit 0
fi
echo "debian_torch113: $dir does not give $python a torch 1.13; what importing it says:" >&2
(eval "$(environment)"
 "$python" -c 'import torch, torchvision, onnx, transformers, einops, timm; print(torch.__version__)') >&2 || true
exit 1
