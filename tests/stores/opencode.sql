.read tests/stores/opencode-schema.sql
INSERT INTO project VALUES ('prj_1', '/home/ada/shop', 1796000000000);
INSERT INTO session VALUES ('ses_0a1', 'prj_1', NULL, 'tidy-cart', '/home/ada/shop', 'Fix the empty cart', '1.18.33', 1796000000000, 1796000090000);
INSERT INTO message VALUES ('msg_01', 'ses_0a1', 1796000001000, 1796000001000, '{"role":"user","time":{"created":1796000001000}}');
INSERT INTO message VALUES ('msg_02', 'ses_0a1', 1796000002000, 1796000040000, '{"role":"assistant","time":{"created":1796000002000},"finish":"tool-calls"}');
INSERT INTO part VALUES ('prt_01', 'msg_01', 'ses_0a1', 1796000001000, 1796000001000, '{"type":"text","text":"Make average_price return 0 for an empty cart."}');
INSERT INTO part VALUES ('prt_02', 'msg_02', 'ses_0a1', 1796000002000, 1796000002000, '{"type":"step-start","snapshot":"4f1c"}');
INSERT INTO part VALUES ('prt_03', 'msg_02', 'ses_0a1', 1796000002100, 1796000003000, '{"type":"tool","tool":"read","callID":"call_r1","state":{"status":"completed","input":{"filePath":"src/cart.py","reason":"See how average_price divides before changing it."},"output":"def average_price(items): ...","title":"src/cart.py","time":{"start":1796000002150,"end":1796000002990}}}');
INSERT INTO part VALUES ('prt_04', 'msg_02', 'ses_0a1', 1796000003100, 1796000004000, '{"type":"tool","tool":"bash","callID":"call_b1","state":{"status":"completed","input":{"command":"pytest -q tests/test_cart.py","description":"Run the cart tests"},"output":"1 failed","time":{"start":1796000003120,"end":1796000003900}}}');
INSERT INTO part VALUES ('prt_05', 'msg_02', 'ses_0a1', 1796000004100, 1796000004100, '{"reason":"tool-calls","snapshot":"4f1c","type":"step-finish","tokens":{"input":2050,"output":163},"cost":0}');
INSERT INTO part VALUES ('prt_06', 'msg_02', 'ses_0a1', 1796000005000, 1796000005000, '{"type":"tool","tool":"edit","callID":"call_e1","state":{"status":"pending","input":{}}}');
