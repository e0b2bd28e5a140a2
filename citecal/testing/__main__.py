"""``python -m citecal.testing [--port N] [--latency S]``: the local OpenAI-compatible server."""

import sys

from citecal.testing.openai_server import main

sys.exit(main())
