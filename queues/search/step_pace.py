"""How many jobs one step of a scan reads, so that a step stays near a target time.

A step is one range read and one read of its jobs' hashes (a script that cuts big values inside
Redis). What a job costs varies with its size and with how busy Redis and this process are, so
the size is worked out from the steps so far: the time each took per job, smoothed, divided
into the target. The time is measured around the whole step, replies decoded and all, so the
part of it Redis spends serving the step is less: a bound, not an estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

TARGET_S = 0.003  # a step's time, round trips and decoding included
SMOOTHING = 0.3  # weight of the newest step in the running cost per job


@dataclass
class Pace:
    least: int = 20
    most: int = 200
    size: int = 50
    target_s: float = TARGET_S
    per_job_s: float = 0.0
    longest_s: float = 0.0  # the slowest step so far (benchmarks print it)

    def took(self, seconds: float, jobs: int) -> None:
        """One step of ``jobs`` jobs took ``seconds``: the next steps' size follows."""
        self.longest_s = max(self.longest_s, seconds)
        if jobs <= 0:
            return
        cost = seconds / jobs
        self.per_job_s = (
            cost if not self.per_job_s else SMOOTHING * cost + (1 - SMOOTHING) * self.per_job_s
        )
        fitting = int(self.target_s / self.per_job_s) if self.per_job_s > 0 else self.most
        self.size = max(self.least, min(self.most, fitting))
