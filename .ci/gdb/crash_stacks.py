# gdb script (.ci/gdb/run.sh): run the program; on a fatal signal print every thread's native
# stack (and the Python stack where gdb's CPython extension is there) and quit with 128 + the
# signal's number; otherwise quit with the program's own exit status. Why: a rare segfault in
# full runs came from a thread with no Python frame, and faulthandler cannot name native frames.
import gdb  # type: ignore[import-not-found]

FATAL = {"SIGSEGV": 11, "SIGBUS": 7, "SIGILL": 4, "SIGFPE": 8, "SIGABRT": 6}
for quiet in ("SIGPIPE", "SIGUSR1", "SIGUSR2", "SIGCHLD", "SIGALRM", "SIGWINCH", "SIGTERM",
              "SIGINT", "SIGHUP", "SIGPROF", "SIGURG", "SIG32", "SIG33", "SIG34", "SIG35",
              "SIG36", "SIG37", "SIG38", "SIG39", "SIG40"):
    gdb.execute(f"handle {quiet} nostop noprint pass", to_string=True)
gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("set print thread-events off")
gdb.execute("set print inferior-events off")
gdb.execute("run")
inferior = gdb.selected_inferior()
if inferior.pid:
    signal = "?"
    try:
        signal = str(gdb.parse_and_eval("$_siginfo.si_signo"))
    except gdb.error:
        pass
    print("\n=== a fatal signal (%s): the native stacks of every thread ===" % signal)
    gdb.execute("info threads")
    gdb.execute("thread apply all bt 40")
    try:
        gdb.execute("thread apply all py-bt")
    except gdb.error:
        pass  # no CPython extension for this interpreter
    gdb.execute("kill")
    gdb.execute("quit %d" % (128 + (int(signal) if signal.isdigit() else 11)))
code = gdb.parse_and_eval("$_exitcode")
gdb.execute("quit %d" % (0 if code.type.code == gdb.TYPE_CODE_VOID else int(code)))
