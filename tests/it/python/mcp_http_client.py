"""The official `mcp` SDK's Streamable HTTP client, as a client configured with a URL.

usage: mcp_http_client.py URL TOOL ARGUMENTS_JSON

Starts a session at URL, lists the tools (every page), calls TOOL with the arguments given, and
ends the session (the SDK sends its DELETE). Prints one JSON object: the server's name, the
protocol version agreed, the tools as listed (name and input schema) and the call's result.
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import PaginatedRequestParams


async def main(url, tool, arguments):
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write) as session:
            initialized = await session.initialize()
            tools = []
            cursor = None
            while True:
                params = PaginatedRequestParams(cursor=cursor) if cursor else None
                page = await session.list_tools(params=params)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
            result = await session.call_tool(tool, arguments)
    return {
        "server": initialized.server_info.name,
        "protocol_version": initialized.protocol_version,
        "tools": [{"name": t.name, "inputSchema": t.input_schema} for t in tools],
        "result": result.model_dump(mode="json", by_alias=True, exclude_none=True),
    }


if __name__ == "__main__":
    url, tool, arguments = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    print(json.dumps(asyncio.run(main(url, tool, arguments))))
