"""Session-wide settings, reached as ``txlab.config`` (``txlab.config.isolation``, ``.default_arch``, ...)."""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field

from txlab.errors import SettingError


def _default_isolation() -> str:
    """ "process" in a Jupyter (IPython) kernel, where a hung or faulting kernel would take the
    user's session with it; "inline" in scripts and tests, where speed matters more."""
    import sys

    # Only a running kernel has these loaded; asking the loaded module imports nothing from Jupyter.
    ipython = sys.modules.get("IPython")
    if "ipykernel" not in sys.modules or ipython is None:
        return "inline"
    try:
        shell = ipython.get_ipython()
    except Exception:  # noqa: BLE001
        return "inline"
    return "process" if shell is not None and type(shell).__name__ == "ZMQInteractiveShell" else "inline"


#: the values of txlab.config.device (and of device= where a call takes one)
DEVICES = ("auto", "gpu", "cpu")


def _from_env(var: str, allowed: tuple, default):
    """``$var`` (case and surrounding blanks ignored) when set, else ``default()``; a value that is
    not one of ``allowed`` is an error naming the variable, not the setting the user never touched."""
    raw = os.environ.get(var)
    if not raw or not raw.strip():
        return default()
    value = raw.strip().lower()
    if value not in allowed:
        raise SettingError(
            f"${var}={raw!r} is not a value txlab knows: use one of {', '.join(allowed)} (or unset {var})"
        )
    return value


#: how an arch is spelt (sm_<major><minor>, 'a' arch-specific or 'f' family): which of them the toolchain
#: targets is told at compile time (txlab.arch, a layer above this one)
_ARCH_SPELLING = re.compile(r"^sm_\d{2,3}[af]?$")


def _arch_setting(value) -> str:
    """``txlab.config.default_arch`` as compiles read it ('SM_90A', '90a' -> 'sm_90a'); a value that is no CUDA
    arch is refused when set, not at the next compile."""
    text = value.strip().lower() if isinstance(value, str) else None
    if text is not None and text.isdigit():
        text = f"sm_{text}"  # (as txlab.compile reads arch='90')
    if text is not None and _ARCH_SPELLING.match(text):
        return text
    guess = re.sub(r"^(?:sm|compute)_?(?=\d)", "sm_", text or "")
    mean = f"; did you mean {guess!r}?" if _ARCH_SPELLING.match(guess) else ""
    raise SettingError(
        f"txlab.config.default_arch must be a CUDA arch such as 'sm_90a', 'sm_100a' or 'sm_80' (the arch kernels "
        f"are compiled for when no GPU is here and none is named), not {value!r}{mean}"
    )


def _timeout_setting(value) -> float:
    """``txlab.config.timeout_s``: a positive, finite number of seconds."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise SettingError(
            f"txlab.config.timeout_s is the seconds an isolated GPU run may take: a positive number such as 10 or "
            f"30.0, not {value!r}"
        )
    return float(value)


@dataclass
class Config:
    #: where GPU runs execute: "process" (a worker owns the CUDA context) or "inline"
    #: ($TXLAB_ISOLATION, else "process" inside a Jupyter kernel and "inline" elsewhere)
    isolation: str = field(
        default_factory=lambda: _from_env("TXLAB_ISOLATION", ("process", "inline"), _default_isolation)
    )
    #: per-launch time budget of an isolated run, in seconds
    timeout_s: float = 10.0
    #: arch used when none is given and no GPU is present
    default_arch: str = "sm_90a"
    #: show progress bars for long work
    progress: bool = True
    #: where txlab.check and calling a kernel run: "auto" (the default: the GPU when one is usable,
    #: else the CPU emulator, txlab.emulate, said once), "gpu" (insist: NoGPUError without one) or
    #: "cpu" (always the emulator). Timing (txlab.bench) needs a GPU whatever this says. $TXLAB_DEVICE
    device: str = field(default_factory=lambda: _from_env("TXLAB_DEVICE", DEVICES, lambda: "auto"))

    def __setattr__(self, name, value):
        if name == "device" and value not in DEVICES:
            raise SettingError(f"txlab.config.device must be 'auto', 'gpu' or 'cpu', not {value!r}")
        if name == "isolation" and value not in ("process", "inline"):
            raise SettingError(f"txlab.config.isolation must be 'process' or 'inline', not {value!r}")
        if name == "default_arch":
            value = _arch_setting(value)
        if name == "timeout_s":
            value = _timeout_setting(value)
        if name == "progress" and not isinstance(value, bool):
            raise SettingError(f"txlab.config.progress must be True or False, not {value!r}")
        if not hasattr(type(self), "__dataclass_fields__") or name in type(self).__dataclass_fields__:
            object.__setattr__(self, name, value)
        else:
            raise AttributeError(
                f"txlab.config has no setting {name!r}; settings: {', '.join(type(self).__dataclass_fields__)}"
            )


config = Config()
