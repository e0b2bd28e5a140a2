"""``python -m citecal.testing [--port N] [--latency S]``: the local OpenAI-compatible server."""

from citecal.testing.openai_server import main

main()
