.read tests/stores/opencode-schema.sql
CREATE TABLE `custom_llm2` (`id` text PRIMARY KEY NOT NULL, `name` text NOT NULL, `config` text NOT NULL,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL);
INSERT INTO session VALUES ('ses_k01', 'prj_k', NULL, 'quiet-tests', '/home/ada/shop', 'Run the tests', '7.7.7', 1796100000000, 1796100030000);
INSERT INTO part VALUES ('prt_k1', 'msg_k1', 'ses_k01', 1796100001000, 1796100001000, '{"type":"text","text":"Run the tests."}');
INSERT INTO part VALUES ('prt_k2', 'msg_k2', 'ses_k01', 1796100002000, 1796100009000, '{"type":"tool","tool":"bash","callID":"call_k1","state":{"status":"completed","input":{"command":"cargo test","description":"Run the tests","reason":"The user asked for the test results."},"output":"ok","time":{"start":1796100002010,"end":1796100008000}}}');
INSERT INTO part VALUES ('prt_k3', 'msg_k2', 'ses_k01', 1796100009100, 1796100009100, '{"reason":"tool-calls","type":"step-finish"}');
