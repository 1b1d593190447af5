import sys

from nicsim.cli import main

sys.exit(main())
