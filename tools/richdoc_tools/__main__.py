import sys

from richdoc_tools.cli import main

sys.exit(main())
