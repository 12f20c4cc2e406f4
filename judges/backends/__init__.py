"""Judge backends behind one interface (`base.JudgeBackend`); `backend_for_spec` builds one.

A *spec* is the plain dict a judge run freezes when it starts (`judges.services.judge_spec`):
backend, model, the NAME of a declared endpoint, parameters and prompt texts. Where the
endpoint points and which variable holds its key are looked up in the operator's declaration
here, at call time: a URL or key variable in a spec (an old or edited run) is ignored.
"""

from judges.backends.base import JudgeBackend, JudgeCallFailed, JudgeConfigError, VerifyResult
from judges.backends.registry import backend_kind

__all__ = [
    "JudgeBackend",
    "JudgeCallFailed",
    "JudgeConfigError",
    "VerifyResult",
    "backend_for_spec",
]


def backend_for_spec(spec: dict) -> JudgeBackend:
    """The backend a frozen spec names, built by its registered class (`registry`)."""
    return backend_kind(spec.get("backend") or "").from_spec(spec)
