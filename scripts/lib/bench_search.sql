-- scripts/bench-search's corpus: :messages messages in :conversations group conversations (sg:bs_N), the user
-- :'user_id' a member of every :stride-th one. Texts mix English words, rare tokens and Chinese words (below);
-- every 7th message is rich text, every 11th an image, every 47th revoked. Psql variables: app_id, user_id, messages,
-- conversations, stride.
\set ON_ERROR_STOP 1
-- One transaction: the server's indexer, already running, must not index part of the corpus between the insert and
-- the statement below that indexes all of it (its entries would collide).
BEGIN;
CREATE TEMPORARY TABLE bench_words AS
SELECT array['hello','meeting','tomorrow','project','coffee','weekend','thanks','photo','dinner','office',
             'deadline','report','travel','music','family','budget','holiday','station','airport','library',
             'garden','window','yellow','quantum','glacier','violet','harbor','lantern','meadow','orbit'] AS en,
       array['你好','明天','会议','项目','咖啡','周末','谢谢','照片','晚饭','办公室','报告','旅行','音乐','家人',
             '预算','假期','车站','机场','图书馆','花园','窗户','黄色','量子','冰川','紫色','港口','灯笼','草地',
             '轨道','世界和平'] AS zh;

INSERT INTO conversations (app_id, id, chat_type, group_id, last_seq, counted_total)
SELECT :app_id, 'sg:bs_' || c, 'group', 'bs_' || c, :messages / :conversations, :messages / :conversations
FROM generate_series(1, :conversations) c;

INSERT INTO conversation_members (app_id, user_id, conversation_id, role)
SELECT :app_id, :'user_id', 'sg:bs_' || c, 'member' FROM generate_series(1, :conversations) c WHERE c % :stride = 0;

-- A text: a word of the vocabulary picked with falling weight, floor(30^r) for r uniform in [0, 1) hashed from n (the
-- first word in one message of five, the last in one of 800), a word picked evenly, a rare token (tokN: about 15 of
-- each among all messages), then two Chinese words, the first weighted like the English one.
INSERT INTO messages (app_id, conversation_id, seq, from_id, to_id, chat_type, msg_type, content, client_msg_id,
                      counted_prefix, created_at, revoked_at)
SELECT :app_id, 'sg:bs_' || (1 + n % :conversations), 1 + n / :conversations, 'bs_u' || (n % 997), 'bs_' ||
       (1 + n % :conversations), 'group',
       CASE WHEN n % 11 = 0 THEN 'image' WHEN n % 7 = 0 THEN 'richText' ELSE 'text' END,
       CASE WHEN n % 47 = 0 THEN NULL
            WHEN n % 11 = 0 THEN '{"objectKey":"k/' || n || '","width":10,"height":10}'
            WHEN n % 7 = 0 THEN json_build_object('text', body, 'spans', '[]'::json)::text
            ELSE to_json(body)::text END,
       'bs' || n, 1 + n / :conversations,
       now() - make_interval(secs => (:messages - n)), CASE WHEN n % 47 = 0 THEN now() END
FROM (
    SELECT n,
           w.en[floor(power(30, (hashint8extended(n, 1) & 1023) / 1024.0))::int] || ' '
           || w.en[1 + (hashint8extended(n, 2) & 1023) % 30] || ' tok' || (hashint8extended(n, 4) & 65535)
           || ' ' || w.zh[floor(power(30, (hashint8extended(n, 3) & 1023) / 1024.0))::int]
           || w.zh[1 + (hashint8extended(n, 5) & 1023) % 30] || '。' AS body
    FROM generate_series(1::bigint, :messages) n, bench_words w
) generated;
-- What the indexer (MessageSearchIndexer) would write for the queue the insert filled, written here in one statement.
INSERT INTO message_search (message_id, app_id, conversation_id, seq, created_at, vector)
SELECT id, app_id, conversation_id, seq, created_at, parley_message_search_vector(conversation_id, msg_type, content)
FROM messages
WHERE msg_type IN ('text', 'richText') AND revoked_at IS NULL;
TRUNCATE message_search_queue;
COMMIT;
ANALYZE conversations; ANALYZE conversation_members; ANALYZE messages; ANALYZE message_search;
