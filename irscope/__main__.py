import sys

from irscope.cli.main import main

sys.exit(main())
