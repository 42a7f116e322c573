"""Imported by the scan's fork server alone (as its first preload): the server, and so every
worker it forks, ignores SIGINT and SIGTERM from birth.

A fork server's child restores the server's handlers as they were after its preloads; without
this it would take Python's SIGINT handler and hold it until the pool's initializer ignores the
signal, and a Ctrl-C sent to the whole process group in that moment (a scheduler stopped from a
terminal) would kill a starting worker, and with it the scan the scheduler meant to finish. The
scan stops its workers itself.
"""

import signal

signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
