"""Google's `google-genai` SDK as a client of `reasons gateway`.

usage: genai_client.py BASE_URL

Asks twice: `generate_content`, with the declaration's schema as `parameters` (the SDK's own
Schema type), and `generate_content_stream`, with it as `parameters_json_schema`. Automatic
function calling is off: the calls come back to this script. Prints one JSON object: for each
way, the function calls the SDK ended up with (id, name, args).
"""

import json
import sys

from google import genai
from google.genai import types

SCHEMA = {
    "type": "object",
    "properties": {"command": {"type": "string", "description": "The command to run"}},
    "required": ["command"],
}


def config(declaration):
    return types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[declaration])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )


def calls(function_calls):
    return [{"id": call.id, "name": call.name, "args": call.args} for call in function_calls or []]


def main():
    client = genai.Client(
        api_key="test-not-a-key", http_options={"base_url": sys.argv[1], "timeout": 30000}
    )
    plain = client.models.generate_content(
        model="gemini-test",
        contents="generate_content",
        config=config(
            types.FunctionDeclaration(
                name="run_shell_command", parameters=types.Schema.model_validate(SCHEMA)
            )
        ),
    )
    streamed = []
    for chunk in client.models.generate_content_stream(
        model="gemini-test",
        contents="generate_content_stream",
        config=config(types.FunctionDeclaration(name="run_shell_command", parameters_json_schema=SCHEMA)),
    ):
        streamed.extend(calls(chunk.function_calls))
    print(json.dumps({"generate_content": calls(plain.function_calls), "generate_content_stream": streamed}))


if __name__ == "__main__":
    main()
