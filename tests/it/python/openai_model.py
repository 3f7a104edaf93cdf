"""The official `openai` SDK as a client of `reasons gateway` in front of a real model.

usage: openai_model.py BASE_URL SESSION

Three requests, each asking for one tool call (`tool_choice: "required"`, no parallel calls, at
temperature 0 with a fixed seed, so the model's answer is the same every run), the assistant's turn
started with Qwen's `<tool_call>` tag (llama.cpp continues a final assistant message; without it a
0.5B model answers in a fenced block of JSON as often as with a call): a plain `create`;
the `stream` helper (llama.cpp's own server-sent events); and the next turn of the first, its
history holding the call as the client got it and the call's result. Prints one JSON object: the
calls the client ended up with for each, and the messages the next turn sent. Writes SESSION, the
conversation as an OpenAI Chat log: one JSON line per completion the client received.
"""

import json
import sys

import openai

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a shell command in the project's folder and return its output.",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string", "description": "The command line"}},
                "required": ["command"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a text file of the project.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string", "description": "The file's path"}},
                "required": ["path"],
            },
        },
    },
]
SYSTEM = "You are a coding agent in a Rust project. Act with the tools."
SETTINGS = dict(
    model="qwen2.5-coder-0.5b-instruct",
    tools=TOOLS,
    tool_choice="required",
    parallel_tool_calls=False,
    temperature=0,
    seed=42,
    max_tokens=120,
)
# The start of a call in Qwen2.5's chat template.
CALL_STARTED = {"role": "assistant", "content": '<tool_call>\n{"name": "'}
TEST_RESULT = "test result: FAILED. 11 passed; 1 failed\n---- parse::tests::empty_input stdout ----\npanicked at src/parse.rs:42:9"


def calls(message):
    return [
        {"id": call.id, "name": call.function.name, "arguments": call.function.arguments}
        for call in message.tool_calls or []
    ]


def main():
    client = openai.OpenAI(base_url=sys.argv[1], api_key="sk-local-model", max_retries=0, timeout=300)
    session = open(sys.argv[2], "w")

    def record(completion):
        session.write(completion.model_dump_json(exclude_none=True) + "\n")
        session.flush()

    first = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Run the tests with cargo test."}]
    plain = client.chat.completions.create(messages=first + [CALL_STARTED], **SETTINGS)
    record(plain)

    streamed = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Show me Cargo.toml."}]
    with client.chat.completions.stream(messages=streamed + [CALL_STARTED], **SETTINGS) as stream:
        for _ in stream:
            pass
        final = stream.get_final_completion()
    record(final)

    message = plain.choices[0].message
    following = first + [
        {
            "role": "assistant",
            "content": message.content or "",
            "tool_calls": [
                {"id": call.id, "type": "function", "function": {"name": call.function.name, "arguments": call.function.arguments}}
                for call in message.tool_calls or []
            ],
        }
    ]
    following += [{"role": "tool", "tool_call_id": call.id, "content": TEST_RESULT} for call in message.tool_calls or []]
    next_turn = client.chat.completions.create(messages=following + [CALL_STARTED], **SETTINGS)
    record(next_turn)

    print(json.dumps({
        "plain": calls(plain.choices[0].message),
        "streamed": calls(final.choices[0].message),
        "next_turn": calls(next_turn.choices[0].message),
        "next_turn_messages": following,
    }))


if __name__ == "__main__":
    main()
