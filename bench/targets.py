"""The speed targets, each an upper bound on one figure of the suite.

They are checked here, by the suite, on the machine it runs on; no unit test
asserts a timing.
"""

from __future__ import annotations

from figures import Target

__all__ = ["targets"]


def targets(run_steps: int, small: int, large: int, cached_steps: int) -> list[Target]:
    growth = f"<= 11x ({large:,} vs {small:,} steps)"
    found: list[Target] = [
        Target("startup.help", 100.0, "<= 100 ms"),
        Target("startup.help_heavy_modules", 0.0, "none"),
        Target("startup.import", 60.0, "<= 60 ms"),
    ]
    for workers in (1, 2):
        for variant in ("cli", "inproc"):
            key = f"run.touch_{run_steps}.j{workers}.{variant}"
            found.append(Target(f"{key}.ratio", 1.25, "<= 1.25x floor"))
            found.append(Target(f"{key}.overhead", 0.3, "<= 0.3 ms/step"))
        own = f"run.touch_{run_steps}.j{workers}.own_work"
        found.append(Target(own, 0.3, "<= 0.3 ms/step"))
    for shape in ("chain", "fanout"):
        found.append(Target(f"dryrun.{shape}_{small}", 1.0, "<= 1 s"))
        found.append(Target(f"dryrun.{shape}.growth", 11.0, growth))
        found.append(Target(f"compile.{shape}_{small}", 1.0, "<= 1 s"))
        found.append(Target(f"compile.{shape}.growth", 11.0, growth))
    found.append(Target(f"cache.touch_{cached_steps}.cli", 0.3, "<= 0.3 s"))
    found.append(Target(f"cache.touch_{cached_steps}.inproc", 0.3, "<= 0.3 s"))
    found.append(Target("status.growth", 1.0, "constant (1000 jobs / 10 jobs = 1)"))
    return found
