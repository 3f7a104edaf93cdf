CREATE TABLE goose_db_version (id INTEGER PRIMARY KEY AUTOINCREMENT, version_id INTEGER NOT NULL, is_applied INTEGER NOT NULL, tstamp TIMESTAMP DEFAULT (datetime('now')));
CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL, message_count INTEGER NOT NULL DEFAULT 0,
  prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0,
  updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL, summary_message_id TEXT);
CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL, parts TEXT NOT NULL default '[]',
  model TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, finished_at INTEGER, provider TEXT);
CREATE TABLE files (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, path TEXT NOT NULL, content TEXT NOT NULL, version INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
INSERT INTO sessions VALUES ('7c2e-crush', NULL, 'Rename the flag', 4, 0, 0, 0.0, 1796200060, 1796200000, NULL);
INSERT INTO messages VALUES ('m-1', '7c2e-crush', 'user', '[{"type":"text","data":{"text":"Rename --verbose to --loud."}}]', NULL, 1796200000, 1796200000, NULL, NULL);
INSERT INTO messages VALUES ('m-2', '7c2e-crush', 'assistant', '[{"type":"reasoning","data":{"thinking":"Find the flag first."}},{"type":"tool_call","data":{"id":"call_g1","name":"grep","input":"{\"pattern\": \"--verbose\", \"path\": \"src\", \"reason\": \"Find every place the flag is read.\"}","type":"function","finished":true}},{"type":"finish","data":{"reason":"tool_use","time":1796200010}}]', 'gpt-5', 1796200005, 1796200010, 1796200010, 'openai');
INSERT INTO messages VALUES ('m-3', '7c2e-crush', 'tool', '[{"type":"tool_result","data":{"tool_call_id":"call_g1","name":"grep","content":"src/cli.rs:12: --verbose","metadata":"","is_error":false}}]', NULL, 1796200011, 1796200011, NULL, NULL);
INSERT INTO messages VALUES ('m-4', '7c2e-crush', 'assistant', '[{"type":"tool_call","data":{"id":"call_e1","name":"edit","input":"{\"file_path\": \"src/cli.rs\", \"old_string\": \"--verbose\", \"new_string\": \"--loud\"}","type":"function","finished":true}},{"type":"finish","data":{"reason":"tool_use","time":1796200030}}]', 'gpt-5', 1796200020, 1796200030, 1796200030, 'openai');
