"""Running a @pystep: in this process natively, or out of process when asked.

A pystep runs in the calling process unless its resolved backend isolates it:
under the venv backend it runs with the venv's own interpreter, and under a
container backend inside its image (only when it names one).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from shinobi.steps.result import StepResult

if TYPE_CHECKING:
    from shinobi.graph import Node
    from shinobi.session import Session

__all__ = ["run_pystep"]


def run_pystep(
    session: Session, name: str, node: Node, values: dict[str, Any], backend_name: str
) -> StepResult:
    step = node.step
    session.emit_started(name, {"backend": "python"})
    started = time.time()
    try:
        returned = step.fn(**values)
        outputs = dict(step.outputs_model.model_validate(step.outputs_from(returned)))
    except Exception as exc:
        return StepResult(
            name=name,
            status="failed",
            returncode=None,
            error=f"{type(exc).__name__}: {exc}",
            backend="python",
            started=started,
            finished=time.time(),
        )
    return StepResult(
        name=name,
        status="ok",
        outputs=outputs,
        backend="python",
        started=started,
        finished=time.time(),
    )
