"""The MCP (Model Context Protocol) server: desktop AI assistants synthesize, list speakers, render
books and read the model's status through the app's services, writing in one folder. See
docs/mcp.md.
"""
