"""`python -m course_lib`: the command line of `course_lib.app.cli`."""
import sys

try:
    from course_lib.app.cli import main
except KeyboardInterrupt:  # Ctrl-C before cli's own guard of its imports: the same one line and 130
    print("error: interrupted — nothing was written", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
