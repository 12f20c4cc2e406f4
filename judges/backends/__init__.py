"""Judge backends behind one interface (`base.JudgeBackend`); `backend_for_spec` builds one.

A *spec* is the plain dict a judge run freezes when it starts (`judges.services.judge_spec`):
backend, model, the NAME of a declared endpoint, parameters and prompt texts. Where the
endpoint points and which variable holds its key are looked up in the operator's declaration
here, at call time: a URL or key variable in a spec (an old or edited run) is ignored.
"""

from judges.backends.base import JudgeBackend, JudgeCallFailed, JudgeConfigError, VerifyResult

__all__ = [
    "JudgeBackend",
    "JudgeCallFailed",
    "JudgeConfigError",
    "VerifyResult",
    "backend_for_spec",
]


def backend_for_spec(spec: dict) -> JudgeBackend:
    backend = spec.get("backend")
    if backend == "baseline":
        from judges.backends.baseline import BaselineBackend

        return BaselineBackend()
    if backend == "openai":
        from judges.backends.openai_backend import OpenAIBackend, OpenAISpec
        from judges.endpoints import EndpointNotDeclared, endpoint_get

        try:
            endpoint = endpoint_get(spec.get("endpoint") or "")
        except EndpointNotDeclared as exc:
            raise JudgeConfigError(str(exc)) from None
        fields = OpenAISpec.__dataclass_fields__
        return OpenAIBackend(
            OpenAISpec(**{k: v for k, v in spec.items() if k in fields and v is not None}),
            endpoint,
        )
    if backend == "bits":
        from judges.backends.bits_backend import BitsSpec, GroundingBitsBackend
        from judges.endpoints import EndpointNotDeclared, endpoint_get

        try:
            endpoint = endpoint_get(spec.get("endpoint") or "")
        except EndpointNotDeclared as exc:
            raise JudgeConfigError(str(exc)) from None
        fields = BitsSpec.__dataclass_fields__
        return GroundingBitsBackend(
            BitsSpec(**{k: v for k, v in spec.items() if k in fields and v is not None}),
            endpoint,
        )
    raise JudgeConfigError(f"unknown judge backend {backend!r}: use openai, bits or baseline")
