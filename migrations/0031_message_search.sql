-- Message search (issue 22, `GET /api/im/search`).
--
-- What is searchable: the words a person wrote. That is a `text` message's content (a JSON string) and a `richText`
-- message's `text` (the plain-text form its validator requires). Media, file, location, call, custom, forward and
-- notify messages are not indexed: their contents are object keys, numbers, app-defined JSON or server text.
--
-- Why a tokenizer of our own: clusters are created with --locale=C, where PostgreSQL's parser sees a run of Chinese
-- or Japanese characters as one word (to_tsvector('simple', '你好世界') is the single lexeme '你好世界', so 世界 never
-- matches) and pg_trgm drops every non-ASCII character (show_trgm('你好') is empty). So
-- `parley_message_search_vector` turns a text into terms itself:
--   * words: runs of Latin, Greek, Cyrillic and other spaced scripts' letters and digits, lower-cased with ICU (the
--     C locale's lower() folds ASCII only), cut to 64 characters so a long URL cannot exceed a lexeme's size;
--   * CJK runs (Han, kana, Hangul): every overlapping pair of characters plus the run's last character alone, so a
--     phrase of two or more characters is the AND of its pairs and a single character is a prefix query (each of
--     its occurrences starts a pair or ends a run).
-- No stemming: a word matches the same word, case aside (search for what was written, in any language).
--
-- Pairs can match where the phrase does not occur (世界 and 界和 both in 世界和平 and in 界和...世界), and a query
-- word may be cut; the search therefore rechecks every piece of `q` (lower-cased) as a substring of the text, on the
-- few rows the index returns.
--
-- Scoping: every lexeme is the message's conversation id, a space and the term ('sg:team 会议'; ids hold no space).
-- A search asks, in each of the caller's conversations, for all terms there: each lexeme's posting list holds only
-- one conversation's messages, so GIN reads no more than the matches the caller may see, whether the word is rare or
-- in half of all messages. (A separate conversation lexeme ANDed with bare terms costs a pass over every readable
-- message per search, and a bare common term's list is huge.)

-- Revoked messages have their content wiped (NULL) and `revoked_at` set: the partial index leaves them out, and an
-- edit updates the row, so the index follows it. Cleared history (seq <= clear_seq) is left to the query.

-- The searchable text of a message, NULL for kinds that have none (or a revoked message).
CREATE FUNCTION parley_message_search_text(msg_type text, content text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE msg_type
        WHEN 'text' THEN content::jsonb #>> '{}'
        WHEN 'richText' THEN content::jsonb ->> 'text'
    END
$$;

-- The pieces of a text: each word and each CJK run, lower-cased, in order.
CREATE FUNCTION parley_search_pieces(body text) RETURNS TABLE (word text, cjk text)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT m[2], m[1]
    FROM regexp_matches(
        lower(body COLLATE "und-x-icu"),
        '([\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002ffff]+)'
        '|([0-9a-z\u00c0-\u024f\u0370-\u1fff\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]+)',
        'g') AS m
$$;

-- What the index holds for a message: its terms (see the top of this file), each after its conversation's id and
-- a space. The terms come from one expression of nested regexp_replace calls, so that PostgreSQL inlines it into the
-- index expression: a send pays for a few regular expression passes, not for a set-returning query per message. From the inside out: anything but word and CJK
-- characters becomes a space; CJK runs are set apart from words; words are cut to 64 characters; every CJK character
-- after the first of its run is doubled (ABC -> ABBCC) so that cutting into pairs gives every overlapping pair and
-- the run's last character alone (AB BC C).
--
-- The index may call nothing but built-ins: ANALYZE in autovacuum and pg_restore evaluate index expressions with an
-- empty search_path, where a call to another of our functions is not found (automatic analyze of `messages` failed
-- with "function parley_message_search_text(text, text) does not exist"). Hence the searchable text is taken here
-- as parley_message_search_text takes it (the repository's recheck uses that one), and the expression is written out.
-- Each argument is used once, so this is inlined; ids hold no backslash, which a replacement string would read.
CREATE FUNCTION parley_message_search_vector(conversation_id text, msg_type text, content text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT array_to_tsvector(array_remove(string_to_array(
        regexp_replace(btrim(coalesce(
            regexp_replace(
            regexp_replace(
                regexp_replace(
                    regexp_replace(
                        regexp_replace(
                            lower((CASE msg_type
                                WHEN 'text' THEN content::jsonb #>> '{}'
                                WHEN 'richText' THEN content::jsonb ->> 'text'
                            END) COLLATE "und-x-icu"),
                            '[^0-9a-z\u00c0-\u024f\u0370-\u1fff\uff10-\uff19\uff21-\uff3a\uff41-\uff5a'
                            '\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f'
                            '\U00020000-\U0002ffff]+',
                            ' ', 'g'),
                        '([\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f'
                        '\U00020000-\U0002ffff]+)',
                        ' \1 ', 'g'),
                    '([0-9a-z\u00c0-\u024f\u0370-\u1fff\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]{64})'
                    '[0-9a-z\u00c0-\u024f\u0370-\u1fff\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]+',
                    '\1', 'g'),
                '(?<=[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f'
                '\U00020000-\U0002ffff])'
                '([\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f'
                '\U00020000-\U0002ffff])',
                '\1\1', 'g'),
            '([\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f'
            '\U00020000-\U0002ffff]'
            '[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f'
            '\U00020000-\U0002ffff])',
            '\1 ', 'g'), '')),
            '(\S+)\s*', conversation_id || ' \1' || E'\n', 'g'),
        E'\n'), ''))
$$;

-- The terms of a search for `q`: every word, and every pair of each CJK run (a lone CJK character as a prefix).
CREATE FUNCTION parley_search_query_terms(q text) RETURNS TABLE (term text, prefix boolean)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT t.term, t.prefix
    FROM parley_search_pieces(q) AS p,
        LATERAL (
            SELECT left(p.word, 64), false WHERE p.word IS NOT NULL
            UNION ALL
            SELECT substr(p.cjk, i, 2), false
            FROM generate_series(1, char_length(p.cjk) - 1) AS i WHERE char_length(p.cjk) > 1
            UNION ALL
            SELECT p.cjk, true WHERE char_length(p.cjk) = 1
        ) AS t (term, prefix)
$$;

-- The queries for `q` in `conversations`, one per conversation: every term in it; NULL when `q` has no term or the
-- list is empty. A search asks `vector @@ ANY (these)`: a bitmap scan per conversation, each intersecting a few short
-- posting lists. (One query ORing every conversation makes GIN test every candidate against the whole tree: a word
-- in a quarter of the messages took twice as long.) Terms hold no quote or backslash (both separate words), nor do
-- conversation ids, so quoting makes them lexemes.
CREATE FUNCTION parley_search_queries(q text, conversations text[]) RETURNS tsquery[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT array_agg(terms::tsquery)
    FROM (SELECT string_agg('''' || c || ' ' || t.term || '''' || CASE WHEN t.prefix THEN ':*' ELSE '' END, ' & ')
                 AS terms
          FROM unnest(conversations) AS c, parley_search_query_terms(q) AS t
          GROUP BY c) AS per_conversation
$$;

-- True when every piece of `q` occurs in `body` (both lower-cased): the recheck that drops what the pairs and the
-- cut words let through.
CREATE FUNCTION parley_search_recheck(body text, q text) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT NOT EXISTS (
        SELECT 1 FROM parley_search_pieces(q) AS p
        WHERE strpos(lower(body COLLATE "und-x-icu"), coalesce(p.word, p.cjk)) = 0)
$$;

-- True when the index alone decides `q`: every word fits a lexeme and no CJK run is longer than a pair. Then the
-- recheck, the costly part of a search for a common word, is skipped.
CREATE FUNCTION parley_search_exact(q text) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT NOT EXISTS (
        SELECT 1 FROM parley_search_pieces(q) AS p
        WHERE char_length(p.word) > 64 OR char_length(p.cjk) > 2)
$$;

-- fastupdate (the default) queues new entries in a pending list merged in bulk, which keeps the cost a send adds
-- small; but every index scan reads the whole pending list, and a search makes one scan per conversation of the
-- caller, so the list is kept short (64 kB instead of gin_pending_list_limit's 4 MB: at 4 MB a search for a rare word
-- took 50 ms instead of 10 right after a bulk load).
CREATE INDEX messages_search ON messages
    USING gin (parley_message_search_vector(conversation_id, msg_type, content))
    WITH (fastupdate = on, gin_pending_list_limit = 64)
    WHERE msg_type IN ('text', 'richText') AND revoked_at IS NULL;
