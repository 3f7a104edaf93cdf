"""The official `mcp` SDK's Streamable HTTP client, as a client configured with a URL, calling a
server's `echo` tool at that URL.

usage: mcp_http_echo.py URL MESSAGE REASON

Starts a session at URL, lists the tools, calls `echo` with MESSAGE and REASON, and ends the
session. Prints one JSON object: the tools as listed (name and input schema) and the call's
result.
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def main(url, message, reason):
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            echo = await session.call_tool("echo", {"message": message, "reason": reason})
    return {
        "tools": [{"name": t.name, "inputSchema": t.input_schema} for t in tools],
        "echo": echo.model_dump(mode="json", by_alias=True, exclude_none=True),
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(*sys.argv[1:4]))))
