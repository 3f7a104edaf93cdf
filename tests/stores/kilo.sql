.read tests/stores/opencode-schema.sql
CREATE TABLE `kilo_board` (`root_session_id` text PRIMARY KEY, `objective` text NOT NULL, `objective_message_id` text,
  `next_seq` integer DEFAULT 1 NOT NULL, `cleared_seq` integer DEFAULT 0 NOT NULL, `message_count` integer DEFAULT 0 NOT NULL,
  `message_bytes` integer DEFAULT 0 NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL);
CREATE TABLE `kilo_board_message` (`id` text PRIMARY KEY, `board_root_session_id` text NOT NULL, `seq` integer NOT NULL,
  `time_created` integer NOT NULL, `sender_session_id` text NOT NULL, `recipient` text NOT NULL, `type` text NOT NULL,
  `body` text NOT NULL, `reply_to` text, `source_message_id` text NOT NULL, `source_call_id` text NOT NULL);
INSERT INTO session VALUES ('ses_k01', 'prj_k', NULL, 'quiet-tests', '/home/ada/shop', 'Run the tests', '7.7.7', 1796100000000, 1796100030000);
INSERT INTO part VALUES ('prt_k1', 'msg_k1', 'ses_k01', 1796100001000, 1796100001000, '{"type":"text","text":"Run the tests."}');
INSERT INTO part VALUES ('prt_k2', 'msg_k2', 'ses_k01', 1796100002000, 1796100009000, '{"type":"tool","tool":"bash","callID":"call_k1","state":{"status":"completed","input":{"command":"cargo test","description":"Run the tests","reason":"The user asked for the test results."},"output":"ok","time":{"start":1796100002010,"end":1796100008000}}}');
INSERT INTO part VALUES ('prt_k3', 'msg_k2', 'ses_k01', 1796100009100, 1796100009100, '{"reason":"tool-calls","type":"step-finish"}');
