"""The exit codes every command shares: the contract users' CI scripts rely on."""

OK = 0  # nothing to report (for `apply`: nothing left to fix)
FINDINGS = 1  # findings remain, a health check failed, or some files could not be read
ERROR = 2  # the tool could not do its job: bad arguments, bad config, missing path, a named file that is neither
# Python nor a notebook (README.md), verify could not run
# Stopped by a signal, as shells number it (128 + the signal); files already rewritten are listed on stderr.
INTERRUPTED = 130  # Ctrl-C (SIGINT)
TERMINATED = 143  # SIGTERM
