"""The MCP (Model Context Protocol) server: AI assistants on the desktop (Claude Desktop,
VS Code, Cursor) synthesize, list speakers, render books and read the model's status through
the same services as the window, the CLI and the speech API, writing only in one folder."""
