//! A row as the event the readers read: its columns and its JSON column written as one line of
//! JSON, and what is wrong with a JSON column that is not what its layout holds.

use std::io::Write;
use std::ops::Range;

use rusqlite::types::ValueRef;

use super::layouts::{JsonHolds, Layout};

/// Writes the event of one row: `{"key": column, …, "json key": <the JSON as stored>}`, or the
/// columns followed by the members of a JSON object. Raw line breaks in the JSON can only be
/// whitespace between its tokens (JSON strings escape theirs): they become spaces, so the
/// event is one line.
pub(super) fn compose(
    layout: &Layout,
    row: &rusqlite::Row<'_>,
    json: &[u8],
    event: &mut Vec<u8>,
) -> rusqlite::Result<Range<usize>> {
    event.push(b'{');
    for (index, (_, key)) in layout.columns.iter().enumerate() {
        if index > 0 {
            event.push(b',');
        }
        write_key(event, key);
        match row.get_ref(index + 1)? {
            ValueRef::Null | ValueRef::Blob(_) => event.extend_from_slice(b"null"),
            // Writing into a Vec cannot fail.
            ValueRef::Integer(number) => {
                let _ = write!(event, "{number}");
            }
            ValueRef::Real(number) => match serde_json::Number::from_f64(number) {
                Some(number) => {
                    let _ = write!(event, "{number}");
                }
                None => event.extend_from_slice(b"null"),
            },
            ValueRef::Text(text) => write_text(event, text),
        }
    }
    let start = event.len();
    let json_at;
    match layout.json.1 {
        Some(key) => {
            event.push(b',');
            write_key(event, key);
            json_at = event.len();
            event.extend_from_slice(json);
            event.push(b'}');
        }
        None => {
            let members = json.trim_ascii();
            match members.strip_prefix(b"{") {
                Some(members) => {
                    if !members.trim_ascii_start().starts_with(b"}") {
                        event.push(b',');
                    }
                    json_at = event.len();
                    event.extend_from_slice(members);
                }
                // Not an object: `produce` says so before it comes here.
                None => {
                    json_at = event.len();
                    event.push(b'}');
                }
            }
        }
    }
    let json_end = match layout.json.1 {
        Some(_) => event.len() - 1,
        None => event.len(),
    };
    let mut from = start;
    while let Some(at) = memchr::memchr2(b'\n', b'\r', &event[from..]) {
        event[from + at] = b' ';
        from += at + 1;
    }
    event.push(b'\n');
    Ok(json_at..json_end)
}

pub(super) fn write_key(event: &mut Vec<u8>, key: &str) {
    write_string(event, key);
    event.push(b':');
}

/// A text column as a JSON string: ids and roles need no escape, and are copied as they are.
pub(super) fn write_text(event: &mut Vec<u8>, text: &[u8]) {
    let plain = text
        .iter()
        .all(|&byte| (0x20..0x80).contains(&byte) && byte != b'"' && byte != b'\\');
    if plain {
        event.push(b'"');
        event.extend_from_slice(text);
        event.push(b'"');
    } else {
        write_string(event, &String::from_utf8_lossy(text));
    }
}

pub(super) fn write_string(event: &mut Vec<u8>, text: &str) {
    // Writing a string into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *event, text);
}

/// What is wrong with the JSON column's text, said of the column rather than of the event the
/// reader saw; `None` when the column is fine (then what the reader said stands).
pub(super) fn why_not_json(column: &str, text: &[u8], holds: JsonHolds) -> Option<String> {
    let object_only = holds == JsonHolds::Object;
    let error = match serde_json::from_slice::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(_)) => return None,
        Ok(serde_json::Value::Array(_)) if !object_only => return None,
        Ok(_) if object_only => return Some(format!("`{column}` holds JSON, but not an object")),
        Ok(_) => {
            return Some(format!(
                "`{column}` holds JSON, but neither an object nor a list"
            ))
        }
        Err(error) => error,
    };
    Some(format!("`{column}` is not JSON: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_column_is_said_to_be_wrong_and_nothing_else() {
        assert_eq!(why_not_json("data", br#"{"a":1}"#, JsonHolds::Object), None);
        assert_eq!(why_not_json("parts", b"[]", JsonHolds::ObjectOrList), None);
        let cut = why_not_json("data", br#"{"a":"#, JsonHolds::Object).unwrap();
        assert!(cut.starts_with("`data` is not JSON: EOF"), "{cut}");
        assert_eq!(
            why_not_json("parts", b"3", JsonHolds::ObjectOrList).unwrap(),
            "`parts` holds JSON, but neither an object nor a list"
        );
        assert_eq!(
            why_not_json("data", b"[]", JsonHolds::Object).unwrap(),
            "`data` holds JSON, but not an object"
        );
    }
}
