import sys

from ragworkbook.cli import main

sys.exit(main())
