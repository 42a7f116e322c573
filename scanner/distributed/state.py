"""What a worker process keeps between jobs: its config (read again when a run was enqueued
with another version of it), its store, and the plan of the run it last worked on."""

from __future__ import annotations

import os

from scanner.config import Config, load_config
from scanner.distributed.bookkeeping import QueuedRun
from scanner.distributed.plan import RunPlan, plan_run, selected_sources
from scanner.distributed.queue import conninfo
from scanner.errors import ConfigError
from scanner.scan.workers import setup_worker
from scanner.store.liveness import HOST
from scanner.store.store import Store


class WorkerState:
    def __init__(self, config_path: str) -> None:
        self.config_path = config_path
        self.config = load_config(config_path)
        conninfo(self.config.database_url)  # PostgreSQL only: refused before the store opens
        self.store = Store(self.config.database_url)
        self.name = f"{HOST}:{os.getpid()}"
        self._plan: tuple[int, RunPlan] | None = None

    def config_of(self, digest: str) -> Config:
        """The config the run was enqueued with: this worker's file, read again if it changed."""
        if self.config.digest != digest:
            self.config = load_config(self.config_path)
        if self.config.digest != digest:
            raise ConfigError(f"{self.config_path} is not the config the run was enqueued with "
                              f"(digest {self.config.digest[:19]}, the run's {digest[:19]})")
        return self.config

    def plan(self, queued: QueuedRun, started_at: object) -> RunPlan:
        """The run's plan, its policies compiled into this process's evaluation setup."""
        if self._plan is not None and self._plan[0] == queued.run_id:
            return self._plan[1]
        self._plan = None
        config = self.config_of(queued.config_digest)
        plan = plan_run(config, selected_sources(config, queued.sources))
        setup_worker(plan.setup(started_at), compiled=(plan.policy_set.policies, plan.exceptions))  # type: ignore[arg-type]
        self._plan = (queued.run_id, plan)
        return plan

    def close(self) -> None:
        self.store.close()
