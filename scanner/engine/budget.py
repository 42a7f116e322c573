"""What one rule's evaluation may cost: evaluation steps, string sizes, list lengths, time.

Kyverno bounds CEL (a cost budget) but not JMESPath; a policy could make a scan run for hours
(a ``foreach`` over millions of elements) or build gigabytes (nested ``replace_all``). Here
every rule evaluation of one resource has a ``Budget``:

- steps: JMESPath function calls (and the size of their list and map arguments), elements
  projected, filtered or flattened, values compared deeply, ``foreach`` elements, pairs an
  ``AnyIn``/``AllIn`` condition compares, nodes of a value a variable brings into a document;
- the length of a string a function builds (checked before building where the result can
  outgrow its arguments: ``replace_all``, ``regex_replace_all``, ``join``, ``to_string``);
- the length of a list a function or projection builds, or a ``foreach`` iterates;
- time, when the caller hands in a clock (the engine reads none of its own): checked every
  ``CHECK_EVERY`` steps against the rule's deadline, which the first check sets (a rule that
  ends within ``CHECK_EVERY`` steps, as most do, never reads the clock).

An overrun raises ``BudgetExceededError``, which no evaluation error handler absorbs; the
evaluation loop turns it into an ``error`` result for that rule and resource naming the
limit, and the scan goes on. Once exceeded, the budget stays exceeded until the next rule
starts (an overrun absorbed by foreign code still gives the rule its error).

The active budget is per thread (``activate``); without one, the default budget checks
sizes but counts no steps and reads no clock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scanner.errors import EngineError

CHECK_EVERY = 1024  # steps between two looks at the clock


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds of one rule evaluation; ``seconds`` applies only with a clock."""

    steps: int = 2_000_000
    string_length: int = 8 * 1024 * 1024
    list_length: int = 1_000_000
    seconds: float = 10.0


DEFAULT_LIMITS = Limits()


class BudgetExceededError(EngineError):
    """A rule evaluation went past one of its limits (``limit`` names which)."""

    def __init__(self, limit: str, message: str) -> None:
        super().__init__(message)
        self.limit = limit
        self.message = message

    def __str__(self) -> str:
        return self.message


class Budget:
    """The running cost of the current rule evaluation."""

    __slots__ = ("_clock", "_deadline", "_first_check", "_next_check", "_seconds", "counting", "exceeded",
                 "limits", "steps")

    def __init__(self, limits: Limits = DEFAULT_LIMITS, clock: Callable[[], float] | None = None,
                 *, counting: bool = True) -> None:
        self.limits = limits
        self._clock = clock
        self.counting = counting
        self.steps = 0
        self.exceeded: BudgetExceededError | None = None
        self._deadline: float | None = None
        self._seconds = limits.seconds
        self._first_check: float = min(CHECK_EVERY, limits.steps + 1) if counting else float("inf")
        self._next_check: float = float("inf")
        if not counting:
            self._clock = None

    def start(self) -> None:
        """A new rule evaluation: no steps spent, no deadline yet (the first check sets it)."""
        self.steps = 0
        self.exceeded = None
        self._next_check = self._first_check
        self._deadline = None

    def charge(self, steps: int = 1) -> None:
        """Spend ``steps``; raise ``BudgetExceededError`` past the step limit or the deadline."""
        self.steps += steps
        if self.steps >= self._next_check:
            self._check()

    def _check(self) -> None:
        limits = self.limits
        if self.steps > limits.steps:
            self.fail("steps", f"limit exceeded: more than {limits.steps:,} evaluation steps in one rule")
        if self._clock is not None:
            now = self._clock()
            if self._deadline is None:
                self._deadline = now + self._seconds
            elif now > self._deadline:
                self.fail("time", f"limit exceeded: rule evaluation took longer than {limits.seconds:g}s")
        self._next_check = float(min(self.steps + CHECK_EVERY, limits.steps + 1))

    def fail(self, limit: str, message: str) -> None:
        """Record and raise the overrun of ``limit``; the budget stays exceeded."""
        error = BudgetExceededError(limit, message)
        if self.counting:
            self.exceeded = error
            self._next_check = 0.0  # every later charge raises again, until the next rule
        raise error

    def check_string(self, length: int, what: str) -> None:
        """A string of ``length`` characters is about to be built by ``what``."""
        if length > self.limits.string_length:
            self.fail("string length", f"limit exceeded: {what} would build a string of {length:,} characters "
                                       f"(limit {self.limits.string_length:,})")

    def check_list(self, length: int, what: str) -> None:
        """A list of ``length`` items is built or iterated by ``what`` (a function's name is
        written as a call)."""
        if length > self.limits.list_length:
            if what.isidentifier():
                what = f"the result of {what}()"
            self.fail("list length", f"limit exceeded: {what} has {length:,} items "
                                     f"(limit {self.limits.list_length:,})")


def text_size(value: Any, limit: int) -> int:
    """About how many characters ``value`` takes as JSON: string lengths plus a few per
    scalar and container. Shared sub-values count each time they are reached (as a
    serializer would write them); the walk stops once the size passes ``limit``."""
    size = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            size += len(item) + 2
        elif isinstance(item, dict):
            size += 2 + 4 * len(item) + sum(len(k) for k in item)
            stack.extend(item.values())
        elif isinstance(item, list):
            size += 2 + len(item)
            stack.extend(item)
        else:
            size += 5
        if size > limit:
            return size
    return size


THREAD = threading.local()  # ``budget``: the active budget of this thread
_local = THREAD


def active() -> Budget:
    """The budget of the rule this thread is evaluating (a size-only default outside one)."""
    try:
        budget = _local.budget
    except AttributeError:
        budget = None
    if budget is None:
        budget = _local.budget = Budget(counting=False)
    return budget  # type: ignore[no-any-return]


def activate(budget: Budget | None) -> Budget | None:
    """Make ``budget`` the one this thread's evaluations charge (None: the default); return
    the one it replaces, for the caller to put back."""
    previous = getattr(_local, "budget", None)
    _local.budget = budget
    return previous
