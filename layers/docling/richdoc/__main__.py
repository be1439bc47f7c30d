import sys

from richdoc.cli import main

sys.exit(main())
