"""The official `anthropic` SDK as a client of `reasons gateway`.

usage: anthropic_client.py BASE_URL

Asks the same question three ways: `messages.create`, the `messages.stream` helper, and
`messages.create(stream=True)` read event by event; then a fourth time (`whole`), streamed. The user's message names the way, so the
scripted model can answer each with a call id of its own. Prints one JSON object: for each way,
the content blocks the SDK ended up with.
"""

import json
import sys

import anthropic

BASH = {
    "name": "Bash",
    "description": "Run a command",
    "input_schema": {
        "type": "object",
        "properties": {"command": {"type": "string"}},
        "required": ["command"],
    },
}


def ask(way):
    return {
        "model": "claude-test",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": way}],
        "tools": [BASH],
    }


def blocks(message):
    return [block.model_dump(include={"type", "id", "name", "input", "text"}) for block in message.content]


def raw_events(client):
    """The stream as events, the input put together from its fragments as an agent does."""
    content = {}
    for event in client.messages.create(**ask("raw"), stream=True):
        if event.type == "content_block_start":
            content[event.index] = event.content_block.model_dump(include={"type", "id", "name", "text"})
            content[event.index]["json"] = ""
        elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
            content[event.index]["json"] += event.delta.partial_json
        elif event.type == "content_block_delta" and event.delta.type == "text_delta":
            content[event.index]["text"] += event.delta.text
    for block in content.values():
        fragments = block.pop("json")
        if block["type"] == "tool_use":
            block["input"] = json.loads(fragments)
    return list(content.values())


def main():
    client = anthropic.Anthropic(
        base_url=sys.argv[1], api_key="sk-ant-test-not-a-key", max_retries=0, timeout=30
    )
    created = client.messages.create(**ask("create"))
    with client.messages.stream(**ask("stream")) as stream:
        streamed = stream.get_final_message()
    answers = {"create": blocks(created), "stream": blocks(streamed), "raw": raw_events(client)}
    # A stream whose call comes whole in its content_block_start, which the SDK keeps as the input.
    with client.messages.stream(**ask("whole")) as stream:
        answers["whole"] = blocks(stream.get_final_message())
    print(json.dumps(answers))


if __name__ == "__main__":
    main()
