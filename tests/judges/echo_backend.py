"""The test-only judge backend of ARCHITECTURE.md's "Add a judge backend" recipe, as a new
backend file would be; `tests/judges/test_backend_registry.py` registers it for one test."""

from annotate.vocabulary import Verdict
from judges.backends.base import VerifyResult
from judges.backends.registry import Declared


class EchoBackend(Declared):
    name = "echo"  # stored on judges and runs, at most 10 characters
    label = "Echo (every word in the pile)"
    default_model = "echo-v1"
    prompt_text = "Echo: SUPPORTED when every word of the claim is in the pile."
    calls: list[int] = []  # chunk sizes seen, for the test

    @classmethod
    def chunk_size(cls, max_concurrency: int) -> int:
        return 3

    @classmethod
    def instrument(cls, spec: dict) -> tuple[str, dict]:
        frozen = {k: v for k, v in spec.items() if k not in ("verify_prompt", "decompose_prompt")}
        return cls.prompt_text, frozen

    @classmethod
    def from_spec(cls, spec: dict) -> "EchoBackend":
        return cls()

    def verify(self, claim_text: str, passages) -> VerifyResult:
        pile = " ".join(p.text.lower() for p in passages)
        words = [w.strip(".,") for w in claim_text.lower().split()]
        found = all(word in pile for word in words)
        verdict = Verdict.SUPPORTED if found else Verdict.NOT_IN_PILE
        return VerifyResult(verdict, 0.9 if found else 0.1, "echo", 0.0)
