// The parse ceiling of `benches/peers`: simdjson's on-demand parser doing the counting job of
// the jq bench (benches/throughput.rs) on a JSON-lines log, one thread.
//
//   peers_simdjson claude|chat FILE
//
// claude: every `tool_use` block of an assistant line's `message.content`, and how many of
//         them carry `input.reason`;
// chat:   every `messages[].tool_calls[]`, and how many of their `function.arguments` (a JSON
//         string, parsed too) carry `reason`.
//
// Prints "calls with_reason" on stdout, and on stderr the seconds spent parsing alone (the
// file's reading apart). Built by benches/peers: g++ -O3 -std=c++17 … -lsimdjson.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string_view>

#include <simdjson.h>

using namespace simdjson;

static bool has_reason(ondemand::object object) {
    for (auto field : object) {
        std::string_view key;
        if (field.unescaped_key().get(key) == SUCCESS && key == "reason") return true;
    }
    return false;
}

int main(int argc, char **argv) {
    if (argc != 3 || (std::strcmp(argv[1], "claude") != 0 && std::strcmp(argv[1], "chat") != 0)) {
        std::fprintf(stderr, "usage: peers_simdjson claude|chat FILE\n");
        return 2;
    }
    bool claude = std::strcmp(argv[1], "claude") == 0;
    padded_string text;
    if (padded_string::load(argv[2]).get(text) != SUCCESS) {
        std::fprintf(stderr, "peers_simdjson: cannot read %s\n", argv[2]);
        return 2;
    }
    auto started = std::chrono::steady_clock::now();
    ondemand::parser parser;
    ondemand::parser arguments_parser;
    ondemand::document_stream lines;
    // A batch must hold the longest line; a Chat-style line is a whole conversation.
    if (parser.iterate_many(text, 64 << 20).get(lines) != SUCCESS) {
        std::fprintf(stderr, "peers_simdjson: cannot iterate %s\n", argv[2]);
        return 2;
    }
    unsigned long long calls = 0, with_reason = 0, errors = 0;
    for (auto line : lines) {
        if (line.error() != SUCCESS) { errors++; continue; }
        ondemand::document_reference document = line.value_unsafe();
        if (claude) {
            std::string_view type;
            if (document.find_field_unordered("type").get_string().get(type) != SUCCESS ||
                type != "assistant")
                continue;
            ondemand::array content;
            if (document.find_field_unordered("message").find_field_unordered("content").get_array().get(content) != SUCCESS)
                continue;
            for (auto block : content) {
                ondemand::object object;
                if (block.get_object().get(object) != SUCCESS) continue;
                std::string_view block_type;
                if (object.find_field_unordered("type").get_string().get(block_type) != SUCCESS ||
                    block_type != "tool_use")
                    continue;
                calls++;
                ondemand::object input;
                if (object.find_field_unordered("input").get_object().get(input) == SUCCESS &&
                    has_reason(input))
                    with_reason++;
            }
        } else {
            ondemand::array messages;
            if (document.find_field_unordered("messages").get_array().get(messages) != SUCCESS) continue;
            for (auto message : messages) {
                ondemand::array tool_calls;
                if (message.find_field_unordered("tool_calls").get_array().get(tool_calls) != SUCCESS) continue;
                for (auto call : tool_calls) {
                    calls++;
                    std::string_view arguments;
                    if (call.find_field_unordered("function").find_field_unordered("arguments").get_string().get(arguments) != SUCCESS)
                        continue;
                    padded_string padded(arguments);
                    ondemand::document parsed;
                    ondemand::object object;
                    if (arguments_parser.iterate(padded).get(parsed) == SUCCESS &&
                        parsed.get_object().get(object) == SUCCESS && has_reason(object))
                        with_reason++;
                }
            }
        }
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::printf("%llu %llu\n", calls, with_reason);
    std::fprintf(stderr, "%.6f%s\n", seconds, errors ? " (lines in error)" : "");
    return errors ? 1 : 0;
}
