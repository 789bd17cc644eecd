from __future__ import annotations

import sys

from etpkg._internal.cli import main

sys.exit(main())
