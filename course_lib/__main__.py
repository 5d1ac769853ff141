import sys

from course_lib.app.cli import main

sys.exit(main())
