"""The official `mcp` SDK's Streamable HTTP client, as a client configured with a URL, driving the
MCP reference server (server-everything) at that URL.

usage: mcp_http_client.py URL

Starts a session at URL declaring sampling (answered here with a fixed text) and elicitation
(answered with a fixed name), lists the tools (every page) until the server has registered its
sampling and elicitation tools (it does so once it knows the client's capabilities, after
initialization), then calls, each with a reason: `echo`, the long operation with a progress
token, the sampling tool and the elicitation tool. Ends the session (the SDK sends its DELETE).
Prints one JSON object: the server's name, the tools as listed (name and input schema), each
call's result, the progress reported, and the sampling and elicitation requests the server made.
"""

import asyncio
import json
import sys
import time

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CreateMessageResult, ElicitResult, PaginatedRequestParams, TextContent

SAMPLED = "a sampled answer from the test's client"
ELICITED = "Ada Lovelace"
TOOLS = ("trigger-sampling-request", "trigger-elicitation-request")
WAIT_SECONDS = 30


async def list_all(session):
    tools, cursor = [], None
    while True:
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


def dumped(result):
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


async def main(url):
    sampled = []
    elicited = []
    progress = []

    async def sampling(context, params):
        sampled.append(params.messages[0].content.text)
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text=SAMPLED), model="test"
        )

    async def elicitation(context, params):
        elicited.append(params.message)
        return ElicitResult(action="accept", content={"name": ELICITED})

    async def on_progress(done, total, message):
        progress.append(done)

    async with streamable_http_client(url) as (read, write):
        async with ClientSession(
            read, write, sampling_callback=sampling, elicitation_callback=elicitation
        ) as session:
            initialized = await session.initialize()
            deadline = time.monotonic() + WAIT_SECONDS
            while True:
                tools = await list_all(session)
                if all(any(tool.name == name for tool in tools) for name in TOOLS):
                    break
                if time.monotonic() > deadline:
                    raise SystemExit(f"no {TOOLS} listed: {[t.name for t in tools]}")
                await asyncio.sleep(0.02)
            echo = await session.call_tool(
                "echo", {"message": "hello through the proxy", "reason": "to check the HTTP face"}
            )
            long = await session.call_tool(
                "trigger-long-running-operation",
                {"duration": 1, "steps": 3, "reason": "to see progress"},
                progress_callback=on_progress,
            )
            sampling_call = await session.call_tool(
                "trigger-sampling-request", {"prompt": "say hi", "reason": "to see sampling"}
            )
            elicitation_call = await session.call_tool(
                "trigger-elicitation-request", {"reason": "to see elicitation"}
            )
    return {
        "server": initialized.server_info.name,
        "tools": [{"name": t.name, "inputSchema": t.input_schema} for t in tools],
        "echo": dumped(echo),
        "long": dumped(long),
        "progress": progress,
        "sampling": dumped(sampling_call),
        "sampled": sampled,
        "elicitation": dumped(elicitation_call),
        "elicited": elicited,
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1]))))
