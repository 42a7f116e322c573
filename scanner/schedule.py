"""``scanner schedule``: APScheduler 3 in the foreground, one job per configured cron entry.

Jobs are added by textual reference with plain arguments, ``max_instances=1`` and
``coalesce=True``. SIGTERM/SIGINT stop the scheduler after the running scan finishes. A
failing scan is logged and the scheduler keeps running; a lock in the database keeps two
schedulers from running the same scan at once (see ``scan.run_scheduled``). With
``distributed`` the jobs only enqueue a run for ``scanner worker`` (``scanner enqueue``'s code,
under the same lock); the database must then be PostgreSQL, checked before the scheduler starts.
"""

from __future__ import annotations

import logging
import signal
import threading
from datetime import UTC, datetime
from typing import Any

from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_EXECUTED, JobExecutionEvent
from apscheduler.schedulers.blocking import BlockingScheduler
from apscheduler.triggers.cron import CronTrigger

from scanner.config import Config, ScheduleEntry, load_config
from scanner.errors import ConfigError, Location

log = logging.getLogger("scanner.schedule")
JOB = "scanner.schedule:scheduled_scan"
ENQUEUE_JOB = "scanner.schedule:scheduled_enqueue"


def cron_trigger(entry: ScheduleEntry, index: int = 0) -> CronTrigger:
    """A trigger for a 5-field cron line (or 6 fields with seconds first); ``index`` is the
    entry's position in the config's ``schedule`` list (for errors)."""
    fields = entry.cron.split()
    try:
        if len(fields) == 6:
            second, minute, hour, day, month, weekday = fields
            trigger = CronTrigger(second=second, minute=minute, hour=hour, day=day, month=month,
                                  day_of_week=weekday, timezone=entry.timezone)
        else:
            trigger = CronTrigger.from_crontab(entry.cron, timezone=entry.timezone)
    except (ValueError, LookupError) as exc:
        raise ConfigError(f"schedule[{index}].cron: {exc}", entry.location) from exc
    if trigger.get_next_fire_time(None, datetime.now(UTC)) is None:
        raise ConfigError(f"schedule[{index}].cron: {entry.cron!r} never fires (no such date)", entry.location)
    return trigger


def scheduled_scan(config_path: str, jobs: int | None = None) -> int:
    """The job: one scan with trigger ``schedule``. Errors are logged by the listener."""
    from scanner.scan.runner import run_scheduled

    return run_scheduled(config_path, jobs=jobs)


def scheduled_enqueue(config_path: str, shards: int = 1) -> int:
    """The ``--distributed`` job: enqueue one run (trigger ``schedule``) for the workers."""
    from scanner.distributed.enqueue import enqueue_scheduled

    return enqueue_scheduled(config_path, shards)


def build_scheduler(config: Config, *, run_now: bool = False, jobs: int | None = None,
                    distributed: bool = False, shards: int = 1) -> BlockingScheduler:
    """The scheduler with one job per cron entry (and one at start with ``run_now``): a scan, or
    with ``distributed`` an enqueue of ``shards`` jobs per source."""
    if not config.schedule and not run_now:
        raise ConfigError("schedule: no entries, so nothing would ever run: add one (schedule: [{cron: "
                          "'0 2 * * *'}]) or pass --run-now", Location(config.path))
    if distributed:
        from scanner.distributed.queue import conninfo

        conninfo(config.database_url)  # PostgreSQL only, as `scanner enqueue`
    func, args, what = (ENQUEUE_JOB, [config.path, shards], "enqueue") if distributed else \
        (JOB, [config.path, jobs], "scan")
    scheduler = BlockingScheduler(timezone=UTC)
    options = {"max_instances": 1, "coalesce": True, "misfire_grace_time": config.scan.misfire_grace_seconds,
               "replace_existing": True}
    for i, entry in enumerate(config.schedule):
        scheduler.add_job(func, trigger=cron_trigger(entry, i), args=args, id=f"scan-{i}",
                          name=f"{what} ({entry.cron} {entry.timezone})", **options)
    if run_now:
        scheduler.add_job(func, trigger="date", run_date=datetime.now(UTC), args=args,
                          id="scan-now", name=f"{what} (at start)", **options)

    def listen(event: JobExecutionEvent) -> None:
        if event.exception is not None:
            log.error("scheduled %s failed: %s", what, event.exception)
        else:
            log.info("scheduled %s finished with exit code %s", what, event.retval)

    scheduler.add_listener(listen, EVENT_JOB_EXECUTED | EVENT_JOB_ERROR)
    return scheduler


def run_scheduler(config_path: str, *, run_now: bool = False, jobs: int | None = None, distributed: bool = False,
                  shards: int = 1) -> int:
    """Run in the foreground until SIGTERM/SIGINT; returns the exit code."""
    config = load_config(config_path)
    scheduler = build_scheduler(config, run_now=run_now, jobs=jobs, distributed=distributed, shards=shards)
    stopping = threading.Event()

    def stop(signum: int, _frame: Any) -> None:
        if stopping.is_set():
            return
        stopping.set()
        log.warning("received %s: stopping after the running scan", signal.Signals(signum).name)
        # shutdown(wait=True) from another thread: the running job finishes, then start() returns
        threading.Thread(target=scheduler.shutdown, kwargs={"wait": True}, daemon=True).start()

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        for job in scheduler.get_jobs():
            log.info("scheduled %s", job.name)
        scheduler.start()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    log.info("scheduler stopped")
    return 0
