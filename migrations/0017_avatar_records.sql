-- Avatars are records of their own (issue 18, item 2). Setting a file as a user's or a group's avatar copies its
-- reference into a new file row (same blob, new object key) that names its holder; only that copy becomes
-- readable by the whole app, and only while the holder's profile still names it. The original key keeps its own
-- readers: revoking the message that carried it, or leaving the group it was sent in, still takes it away.
ALTER TABLE files
    ADD COLUMN avatar_kind text CHECK (avatar_kind IN ('user', 'group')),
    ADD COLUMN avatar_holder text,
    ADD CONSTRAINT files_avatar_holder CHECK ((avatar_kind IS NULL) = (avatar_holder IS NULL));

-- A new object key in the server's format (<app id>/<yyyy>/<mm>/<22 base64url characters>) for the copies below.
CREATE FUNCTION parley_new_object_key(p_app_id bigint) RETURNS text
LANGUAGE sql VOLATILE AS $$
    SELECT p_app_id || '/' || to_char(now() AT TIME ZONE 'UTC', 'YYYY/MM') || '/'
        || substr(translate(encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')),
                                   'base64'), '+/', '-_'), 1, 22)
$$;

-- Avatars set before this migration were never checked. Keep those their holder could read (the user uploaded the
-- file or sees a message carrying it; for a group, a member uploaded it or the group's conversation carries it),
-- as copies like the ones the server makes from now on; clear the rest.
CREATE TEMPORARY TABLE legacy_avatars ON COMMIT DROP AS
SELECT 'user'::text AS kind, u.app_id, u.id AS holder, f.object_key AS original,
       parley_new_object_key(u.app_id) AS copy
FROM users u
JOIN files f ON f.object_key = u.avatar AND f.app_id = u.app_id AND f.mime_type LIKE 'image/%' AND f.mime_type NOT LIKE '%xml%'
WHERE f.owner_id = u.id
   OR EXISTS (SELECT 1 FROM messages m
              JOIN conversation_members cm ON cm.app_id = m.app_id AND cm.conversation_id = m.conversation_id
                                          AND cm.user_id = u.id
              WHERE m.app_id = u.app_id AND m.object_keys @> ARRAY[f.object_key] AND m.object_keys IS NOT NULL)
UNION ALL
SELECT 'group', g.app_id, g.id, f.object_key, parley_new_object_key(g.app_id)
FROM groups g
JOIN files f ON f.object_key = g.avatar_key AND f.app_id = g.app_id AND f.mime_type LIKE 'image/%' AND f.mime_type NOT LIKE '%xml%'
WHERE EXISTS (SELECT 1 FROM conversation_members cm
              WHERE cm.app_id = g.app_id AND cm.conversation_id = 'sg:' || g.id AND cm.user_id = f.owner_id)
   OR EXISTS (SELECT 1 FROM messages m
              WHERE m.app_id = g.app_id AND m.conversation_id = 'sg:' || g.id
                AND m.object_keys @> ARRAY[f.object_key] AND m.object_keys IS NOT NULL);

INSERT INTO files (object_key, app_id, owner_id, sha256, size, mime_type, ext, name, thumbnail_key, avatar_kind,
                   avatar_holder)
SELECT l.copy, f.app_id, f.owner_id, f.sha256, f.size, f.mime_type, f.ext, f.name, f.thumbnail_key, l.kind, l.holder
FROM legacy_avatars l JOIN files f ON f.object_key = l.original;

UPDATE users u SET avatar = l.copy FROM legacy_avatars l
WHERE l.kind = 'user' AND u.app_id = l.app_id AND u.id = l.holder;
UPDATE users u SET avatar = NULL
WHERE u.avatar IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM legacy_avatars l WHERE l.kind = 'user' AND l.app_id = u.app_id AND l.holder = u.id);

UPDATE groups g SET avatar_key = l.copy FROM legacy_avatars l
WHERE l.kind = 'group' AND g.app_id = l.app_id AND g.id = l.holder;
UPDATE groups g SET avatar_key = NULL
WHERE g.avatar_key IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM legacy_avatars l WHERE l.kind = 'group' AND l.app_id = g.app_id AND l.holder = g.id);

CREATE INDEX files_avatar ON files (avatar_kind, avatar_holder) WHERE avatar_kind IS NOT NULL;
