"""The parts of bfcl-eval that benches/bfcl.py and tests/it/real/real_bfcl.rs use, without its heavy
dependencies: the data, its ground truth, BFCL's OpenAI function-calling conversion and its AST
checker, all from the installed package (`pip install --no-deps bfcl-eval==2026.3.23`).

bfcl-eval declares some thirty dependencies (the SDKs of every provider it benchmarks, torch
through sentence-transformers, tree-sitter for Java and JavaScript, …). The code called here needs
none of them, but the modules it lives in import a few at their top. Those are stood in for by
inert modules, and only those (STUBBED below, each with what it is for in bfcl-eval):

- `filelock`: `bfcl_eval.utils.load_file` takes a file lock unless `use_lock=False`, which is how
  it is called here;
- `tenacity`: the retry decorator of the API handlers (`model_handler/utils.py`);
- `tree_sitter`, `tree_sitter_java`, `tree_sitter_javascript`: the Java and JavaScript parsers of
  `model_handler/parser/` (the categories run here are Python's).

One module of bfcl-eval itself is replaced: `bfcl_eval.constants.model_config` imports every
model handler of the package (and with them every provider's SDK) to build `MODEL_CONFIG_MAPPING`,
of which the AST checker reads one field: `underscore_to_dot` of the model it is told it scores,
which says that the model's API cannot take a `.` in a function name and got `_` instead (as
`convert_to_tool` writes it for OpenAI-style function calling). `MODEL_NAME` gets that one entry,
`underscore_to_dot=True`, as BFCL sets it for its OpenAI function-calling models
(`gpt-4o-2024-11-20-FC` among them).
"""

import importlib.abc
import importlib.machinery
import json
import sys
import types

# The name the checker is given for the model it scores (see the module's doc).
MODEL_NAME = "reasons-bench-FC"

STUBBED = ("filelock", "tenacity", "tree_sitter", "tree_sitter_java", "tree_sitter_javascript")


class _Inert:
    """Stands in for anything a stubbed module is asked for at import time: calling it, or
    anything on it, gives another; it can be a base class and a decorator."""

    def __call__(self, *args, **kwargs):
        return _Inert()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Inert()

    def __mro_entries__(self, bases):
        return (object,)

    def __or__(self, other):
        return self


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Inert()


class _Stubs(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the STUBBED modules that are not installed (an installed one is used as it is)."""

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] not in STUBBED:
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            found = getattr(finder, "find_spec", None)
            if found and found(name, path, target):
                return None
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec):
        return _StubModule(spec.name)

    def exec_module(self, module):
        module.__path__ = []


def _load():
    sys.meta_path.append(_Stubs())
    model_config = types.ModuleType("bfcl_eval.constants.model_config")
    model_config.MODEL_CONFIG_MAPPING = {
        MODEL_NAME.replace("_", "/"): types.SimpleNamespace(underscore_to_dot=True)
    }
    sys.modules["bfcl_eval.constants.model_config"] = model_config
    from bfcl_eval import utils
    from bfcl_eval.constants import enums, type_mappings
    from bfcl_eval.eval_checker.ast_eval import ast_checker
    from bfcl_eval.model_handler import utils as handler_utils
    return utils, enums, type_mappings, ast_checker, handler_utils


_utils, _enums, _type_mappings, _ast_checker, _handler_utils = _load()


def version():
    import importlib.metadata
    return importlib.metadata.version("bfcl-eval")


def stubs_in_use():
    """The STUBBED modules that were not installed, and so were stood in for."""
    return sorted(name for name, module in sys.modules.items() if isinstance(module, _StubModule))


def load_category(category):
    """The category's entries as BFCL's `load_dataset_entry` gives them (the same steps, without
    its file lock), and its ground truth by id (none for the irrelevance categories)."""
    path = _utils.PROMPT_PATH / f"{_utils.VERSION_PREFIX}_{category}.json"
    entries = _utils.load_file(path, use_lock=False)
    entries = _utils.process_agentic_test_case(entries)
    entries = _utils.populate_test_cases_with_predefined_functions(entries)
    entries = _utils.add_language_specific_hint_to_function_doc(entries)
    answers = {}
    answer_path = _utils.POSSIBLE_ANSWER_PATH / f"{_utils.VERSION_PREFIX}_{category}.json"
    if answer_path.exists():
        answers = {entry["id"]: entry["ground_truth"]
                   for entry in _utils.load_file(answer_path, use_lock=False)}
    return entries, answers


def openai_tools(functions):
    """The declarations as BFCL's OpenAI Chat handler (`OpenAICompletionsHandler._compile_tools`)
    sends them: `convert_to_tool` with its `GORILLA_TO_OPENAPI` type mapping (`dict` → object,
    `float` → number with `format: float`, `tuple` → array) and `.` in names written `_`."""
    return _handler_utils.convert_to_tool(
        functions, _type_mappings.GORILLA_TO_OPENAPI, _enums.ModelStyle.OPENAI_COMPLETIONS)


def decode(tool_calls):
    """What BFCL's OpenAI handler decodes from an answer (`decode_ast` in function-calling mode):
    one `{name: arguments}` per call, the arguments parsed from their JSON text. Raises, as it
    does, on arguments that are no JSON."""
    return [{call["function"]["name"]: json.loads(call["function"]["arguments"])}
            for call in tool_calls]


def score(category, entry, answers, tool_calls, content):
    """Whether BFCL's checker takes the answer the client got as right, and why not.

    `tool_calls` is the answer's `tool_calls` (or None), `content` its text. As BFCL's runner
    does: in an irrelevance category the answer is right when it decodes to no call (no
    `tool_calls`, or ones that do not decode); elsewhere it must decode, be in the
    function-calling format, and pass `ast_checker` against the possible answers."""
    model_result = [{c["function"]["name"]: c["function"]["arguments"]} for c in tool_calls or []]
    if "irrelevance" in category:
        if not tool_calls:
            return True, None
        try:
            decoded = decode(tool_calls)
        except Exception:
            return True, None
        if _utils.is_empty_output(decoded):
            return True, None
        return False, "irrelevance_error:decoder_success"
    if not tool_calls:
        # BFCL's handler falls back to the text when there are no tool calls, and decoding text
        # as calls fails.
        return False, "ast_decoder:decoder_failed"
    try:
        decoded = decode(tool_calls)
    except Exception as error:
        return False, f"ast_decoder:decoder_failed ({error})"
    if not _utils.is_function_calling_format_output(decoded):
        return False, "ast_decoder:decoder_wrong_output_format"
    del model_result
    result = _ast_checker.ast_checker(entry["function"], decoded, answers[entry["id"]],
                                      _enums.Language.PYTHON, category, MODEL_NAME)
    if result["valid"]:
        return True, None
    return False, f"{result.get('error_type')}: {'; '.join(map(str, result.get('error', [])))[:300]}"
