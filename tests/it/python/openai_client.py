"""The official `openai` SDK as a client of `reasons gateway`.

usage: openai_client.py BASE_URL

Asks four ways, each naming itself in the user's message so that the scripted model can give
its call an id of its own: Chat Completions `create`, the Chat `stream` helper, Responses
`create`, and the Responses `stream` helper. Prints one JSON object: for each way, the function
calls as the SDK ended up with them (name, id, arguments string), and for the helpers also the
arguments their own events and accumulators reported along the way.
"""

import json
import sys

import openai

SCHEMA = {
    "type": "object",
    "properties": {"cmd": {"type": "string", "description": "The command to run"}},
    "required": ["cmd"],
}
CHAT_TOOLS = [{"type": "function", "function": {"name": "exec_command", "parameters": SCHEMA}}]
RESPONSES_TOOLS = [{"type": "function", "name": "exec_command", "parameters": SCHEMA, "strict": False}]


def chat_calls(message):
    return [
        {"id": call.id, "name": call.function.name, "arguments": call.function.arguments}
        for call in message.tool_calls or []
    ]


def responses_calls(response):
    return [
        {"id": item.call_id, "name": item.name, "arguments": item.arguments}
        for item in response.output
        if item.type == "function_call"
    ]


def chat_create(client):
    completion = client.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": "chat_create"}], tools=CHAT_TOOLS
    )
    return {"calls": chat_calls(completion.choices[0].message)}


def chat_stream(client):
    done = []
    with client.chat.completions.stream(
        model="gpt-test", messages=[{"role": "user", "content": "chat_stream"}], tools=CHAT_TOOLS
    ) as stream:
        for event in stream:
            if event.type == "tool_calls.function.arguments.done":
                done.append(event.arguments)
        final = stream.get_final_completion()
    return {"calls": chat_calls(final.choices[0].message), "done_events": done}


def responses_create(client):
    response = client.responses.create(model="gpt-test", input="responses_create", tools=RESPONSES_TOOLS)
    return {"calls": responses_calls(response)}


def responses_stream(client):
    snapshots, done, items = [], [], []
    with client.responses.stream(model="gpt-test", input="responses_stream", tools=RESPONSES_TOOLS) as stream:
        for event in stream:
            if event.type == "response.function_call_arguments.delta":
                snapshots.append(event.snapshot)
            elif event.type == "response.function_call_arguments.done":
                done.append(event.arguments)
            elif event.type == "response.output_item.done" and event.item.type == "function_call":
                items.append(event.item.arguments)
        final = stream.get_final_response()
    return {
        "calls": responses_calls(final),
        "last_snapshot": snapshots[-1] if snapshots else None,
        "done_events": done,
        "item_done_events": items,
    }


def main():
    client = openai.OpenAI(base_url=sys.argv[1], api_key="sk-test-not-a-key", max_retries=0, timeout=30)
    ways = [chat_create, chat_stream, responses_create, responses_stream]
    print(json.dumps({way.__name__: way(client) for way in ways}))


if __name__ == "__main__":
    main()
