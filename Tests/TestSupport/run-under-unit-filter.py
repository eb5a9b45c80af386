#!/usr/bin/env python3
"""Runs a command under the system-call filter a systemd unit declares, as systemd would apply it.

The unit's SystemCallFilter= lines are read in order with systemd's rules (systemd.exec(5)): the
first line decides the mode (an allow list unless it starts with "~"; in allow-list mode @default
is always allowed), later plain lines add to the list and "~" lines take away. Sets such as
@system-service are expanded as `systemd-analyze syscall-filter` lists them, nested sets included.
The filter is loaded with libseccomp (Debian's python3-seccomp) and kills the process with SIGSYS
on any other system call, as systemd does without SystemCallErrorNumber=; then the command is
exec'd.

When started as root, the command runs as the unit's unprivileged user would: --user NAME (the
unit's User=) owns --workdir DIR (its state directory) and the command runs as NAME there. As root,
SQLite would chown the files it creates, a call the unit rightly forbids to a service.

Usage: run-under-unit-filter.py UNIT_FILE [--user NAME --workdir DIR] -- COMMAND [ARGS...]
       run-under-unit-filter.py UNIT_FILE --print   (the allowed calls, one a line)
"""
import os
import pwd
import subprocess
import sys

import seccomp


def expand(name, cache):
    """The system calls a set (or a single call) stands for."""
    if not name.startswith("@"):
        return {name}
    if name not in cache:
        listing = subprocess.run(
            ["systemd-analyze", "syscall-filter", "--no-pager", name],
            check=True, capture_output=True, text=True).stdout
        calls = set()
        for line in listing.splitlines()[1:]:
            entry = line.strip()
            if not entry or entry.startswith("#"):
                continue
            calls |= expand(entry, cache)
        cache[name] = calls
    return cache[name]


def allowed_calls(unit_path):
    lines = []
    with open(unit_path) as unit:
        for line in unit:
            line = line.strip()
            if line.startswith("SystemCallFilter="):
                lines.append(line[len("SystemCallFilter="):].strip())
    if not lines:
        raise SystemExit(f"{unit_path}: no SystemCallFilter= line")
    if lines[0].startswith("~"):
        raise SystemExit("deny-list-first filters are not used by Entitle's units")
    cache = {}
    allowed = set(expand("@default", cache))
    for value in lines:
        removing = value.startswith("~")
        for name in value.lstrip("~").split():
            calls = expand(name, cache)
            allowed = allowed - calls if removing else allowed | calls
    return allowed


def drop_privileges(user, workdir):
    """Gives `workdir` to `user` and becomes that user (only when started as root)."""
    if os.geteuid() != 0:
        return
    entry = pwd.getpwnam(user)
    for root, folders, files in os.walk(workdir):
        for name in [root] + [os.path.join(root, item) for item in folders + files]:
            os.chown(name, entry.pw_uid, entry.pw_gid)
    os.setgroups([])
    os.setgid(entry.pw_gid)
    os.setuid(entry.pw_uid)


def main():
    unit_path = sys.argv[1]
    allowed = allowed_calls(unit_path)
    arguments = sys.argv[2:]
    if arguments == ["--print"]:
        print("\n".join(sorted(allowed)))
        return
    options = {}
    while arguments and arguments[0] in ("--user", "--workdir"):
        options[arguments[0]] = arguments[1]
        arguments = arguments[2:]
    if arguments[:1] != ["--"] or len(arguments) < 2:
        raise SystemExit(__doc__)
    command = arguments[1:]
    if "--workdir" in options:
        os.chdir(options["--workdir"])
        drop_privileges(options.get("--user", "nobody"), options["--workdir"])
    rules = seccomp.SyscallFilter(defaction=seccomp.KILL_PROCESS)
    for call in sorted(allowed):
        try:
            rules.add_rule(seccomp.ALLOW, call)
        except (RuntimeError, ValueError, OSError):
            pass  # a call this kernel or libseccomp does not know on this architecture
    rules.load()
    os.execvp(command[0], command)


main()
