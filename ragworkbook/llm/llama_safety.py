"""Loading llama.cpp models so that they run on every x86-64 CPU, AMX included.

On CPUs with Intel AMX (``amx_tile amx_int8 amx_bf16`` in ``/proc/cpuinfo``: Sapphire Rapids and
later Xeons), a llama.cpp built for the local CPU (llama-cpp-python's default ``-march=native``
build) repacks quantised weights into AMX buffers at load time, and its decode then crashes with a
segmentation fault in ``ggml_backend_amx_mul_mat`` (ggml-org/llama.cpp issue 20824; machine
dependent, seen on this project's machines with SmolLM2-135M Q4_1 at every context size and thread
count). Loading the model with llama.cpp's *extra buffer types* off
(``llama_model_params.use_extra_bufts = False``, what llama.cpp's own tools call ``--no-repack``)
keeps the weights in ordinary CPU buffers, and every call works.

llama-cpp-python's ``Llama`` builds its model parameters from
``llama_cpp.llama_model_default_params()`` and offers no argument for that field, so
:func:`disable_extra_buffers` wraps that function: every model loaded afterwards in the process
loads without extra buffer types. The embedded backend's worker process calls it before loading
anything; so does anything else that starts llama.cpp for this package (the tests' llama.cpp
server).

What it costs where there is no AMX: for SmolLM2-135M Q4_1, nothing measurable (no other buffer
type repacks Q4_1 on x86; ``benchmarks/bench_embedded.py --extra-buffers`` times both settings).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import llama_cpp

__all__ = ["disable_extra_buffers", "extra_buffers_disabled", "has_amx"]

_PATCHED = "_ragworkbook_no_extra_bufts"


def disable_extra_buffers() -> bool:
    """Make every ``llama_cpp.Llama`` created from now on in this process load with
    ``use_extra_bufts = False``. Idempotent; returns False (and changes nothing) when the installed
    llama-cpp-python has no such field (older releases, which predate AMX repacking)."""
    import llama_cpp.llama_cpp as lib

    original = lib.llama_model_default_params
    if getattr(original, _PATCHED, False):
        return True
    if not hasattr(original(), "use_extra_bufts"):
        return False

    def llama_model_default_params() -> lib.llama_model_params:
        params = original()
        params.use_extra_bufts = False
        return params

    setattr(llama_model_default_params, _PATCHED, True)
    lib.llama_model_default_params = llama_model_default_params
    return True


def extra_buffers_disabled(llama: llama_cpp.Llama) -> bool | None:
    """Whether a loaded ``llama_cpp.Llama`` was loaded without extra buffer types (None: no such field)."""
    params = getattr(llama, "model_params", None)
    value = getattr(params, "use_extra_bufts", None)
    return None if value is None else not bool(value)


def has_amx(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Whether this CPU reports any AMX feature (Linux; False where /proc/cpuinfo cannot be read)."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith(("flags", "Features")):
                    return any(flag.startswith("amx") for flag in line.split(":", 1)[-1].split())
    except OSError:
        return False
    return False
