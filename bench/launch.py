"""Runs one measured command and writes its measurement as JSON, the shape ``bench/run.py``'s ``measure`` returns.

    python -I -S bench/launch.py RESULT.json -- COMMAND [ARG ...]

The bench starts this small process for each measurement and the command is forked from it, not from the
bench: Linux carries a process's peak RSS (``ru_maxrss``) across fork and exec, so a command forked from the
bench reported at least the bench's own peak (50-58 MiB, more than a one-file lint uses). Forked from here,
the floor is this interpreter's (about 10 MiB). Its own start is not timed.
"""

import json
import os
import subprocess
import sys
import time


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit("usage: launch.py RESULT.json -- COMMAND [ARG ...]")
    result_path, command = sys.argv[1], sys.argv[3:]
    start = time.perf_counter()
    try:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL)
    except OSError as error:
        result = {"error": f"{command[0]}: {error.strerror}"}
    else:
        _, status, usage = os.wait4(process.pid, 0)
        result = {"wall": time.perf_counter() - start, "cpu": usage.ru_utime + usage.ru_stime, "user": usage.ru_utime,
                  "sys": usage.ru_stime, "rss_mib": usage.ru_maxrss / 1024, "rc": os.waitstatus_to_exitcode(status)}
    with open(result_path, "w") as out:
        json.dump(result, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
