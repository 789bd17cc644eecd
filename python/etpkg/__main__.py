from __future__ import annotations

import sys

from etpkg.cli import main

sys.exit(main())
