CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',
  session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, extension_data TEXT DEFAULT '{}');
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT, session_id TEXT NOT NULL REFERENCES sessions(id),
  role TEXT NOT NULL, content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL, timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  tokens INTEGER, metadata_json TEXT);
CREATE INDEX idx_messages_session ON messages(session_id);
INSERT INTO sessions (id, name, working_dir, created_at, updated_at) VALUES ('20261201_1', 'disk usage', '/home/ada', '2026-12-01 09:00:00', '2026-12-01 09:01:00');
INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, timestamp) VALUES ('msg_u1', '20261201_1', 'user', '[{"type":"text","text":"What is filling my disk?"}]', 1796115600, '2026-12-01 09:00:00');
INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, timestamp) VALUES ('chatcmpl-41', '20261201_1', 'assistant', '[{"type":"thinking","thinking":"Measure first.","signature":""},{"type":"toolRequest","id":"tr_d1","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"du -sh ~/* | sort -h | tail","reason":"Measure which folders are largest."}}}}]', 1796115605, '2026-12-01 09:00:05');
INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, timestamp) VALUES ('msg_u2', '20261201_1', 'user', '[{"type":"toolResponse","id":"tr_d1","toolResult":{"status":"success","value":[{"type":"text","text":"12G /home/ada/videos"}]}}]', 1796115606, '2026-12-01 09:00:06');
INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, timestamp) VALUES ('chatcmpl-42', '20261201_1', 'assistant', '[{"type":"toolRequest","id":"tr_d2","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"ls -lS ~/videos | head"}}}}]', 1796115610, '2026-12-01 09:00:10');
