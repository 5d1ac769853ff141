import sys

from course_lib.infra.cli import main

sys.exit(main())
