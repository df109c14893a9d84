#!/usr/bin/env bash
# Builds what the real-llama tests (test/integration/*/*real-llama*.test.ts) run against: llama.cpp's
# own `llama-server`, CPU only, and a small GGUF model whose weights are random but whose tokenizer
# and chat template are real (Qwen2's). Its answers are gibberish; everything on the wire (stream
# framing, errors, a context overflow, a cancelled task, a killed server) is what llama-server
# really does, at the speed of a real 135M-parameter model. No model download is needed.
#
#   scripts/real-llama/build.sh        # once per machine, about 10 minutes on 2 cores
#   npm test                           # the real-llama tests now run instead of being skipped
#
# Needs git, cmake, a C++ compiler, npm (the source comes from the npm registry, see step 1) and
# python3 with numpy and PyYAML (llama.cpp's gguf-py writes the model). Everything goes under
# $LLAMA_DIR (default /tmp/real-llama), which the tests read too; run it again to finish a build
# that was interrupted (done steps are skipped). JOBS sets the compiler's parallelism.
set -euo pipefail

DIR="${LLAMA_DIR:-/tmp/real-llama}"
HERE="$(cd "$(dirname "$0")" && pwd)"
PYTHON="${PYTHON:-python3}"
# The llama.cpp release the tests' expectations (its error texts, its /props) were checked against.
NODE_LLAMA_CPP=3.22.1
JOBS="${JOBS:-$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN)}"

missing=()
for tool in git cmake npm; do command -v "$tool" >/dev/null || missing+=("$tool"); done
command -v c++ >/dev/null || command -v g++ >/dev/null || command -v clang++ >/dev/null || missing+=("a C++ compiler")
"$PYTHON" -c 'import numpy, yaml' 2>/dev/null || missing+=("$PYTHON with numpy and PyYAML")
if [ ${#missing[@]} -gt 0 ]; then
  echo "build.sh: missing: ${missing[*]}" >&2
  echo "  Debian/Ubuntu: apt-get install git cmake build-essential python3-numpy python3-yaml (and Node.js for npm)" >&2
  echo "  macOS:         xcode-select --install; brew install cmake; pip3 install numpy pyyaml" >&2
  exit 1
fi

mkdir -p "$DIR/download" "$DIR/models"
cd "$DIR"

# 1. The source. node-llama-cpp's npm package carries the llama.cpp release it was built from as a
#    git bundle: an exact, versioned copy from a registry npm already reaches, no GitHub needed.
if [ ! -d llama.cpp/.git ]; then
  echo "== llama.cpp source (node-llama-cpp@$NODE_LLAMA_CPP from the npm registry)"
  rm -rf llama.cpp unpacked
  npm pack "node-llama-cpp@$NODE_LLAMA_CPP" --pack-destination download --loglevel=error >/dev/null
  mkdir unpacked
  tar -xzf "download/node-llama-cpp-$NODE_LLAMA_CPP.tgz" -C unpacked
  git -c advice.detachedHead=false clone --quiet unpacked/package/llama/gitRelease.bundle llama.cpp
  rm -rf unpacked
fi

# 2. The server alone: CPU only (no Metal, CUDA or Vulkan), one static binary, nothing fetched at
#    build time (no prebuilt web UI, no TLS library). The log is kept for when it fails.
SERVER="$DIR/llama.cpp/build/bin/llama-server"
if [ ! -x "$SERVER" ]; then
  echo "== llama-server (cmake, $JOBS jobs; log: $DIR/build.log)"
  (
    cd llama.cpp
    cmake -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=ON -DGGML_METAL=OFF \
      -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
      -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_OPENSSL=OFF
    cmake --build build --target llama-server -j "$JOBS"
  ) >"$DIR/build.log" 2>&1 || { echo "build.sh: the build failed; the end of $DIR/build.log:" >&2; tail -20 "$DIR/build.log" >&2; exit 1; }
fi

# 3. The model (a few seconds).
MODEL="$DIR/models/random-smollm2-shape-f16.gguf"
if [ ! -f "$MODEL" ]; then
  echo "== model"
  "$PYTHON" "$HERE/make-model.py" "$DIR/llama.cpp" "$MODEL.partial"
  mv "$MODEL.partial" "$MODEL"
fi

echo "llama-server: $SERVER"
echo "model:        $MODEL"
echo "start one:    $HERE/start.sh PORT [llama-server args]"
