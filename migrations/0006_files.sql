-- File service (issue 6): uploaded files named by server-generated object keys, their content stored once per
-- app (dedup by SHA-256), and the references that keep them alive.

-- Per-app limits; no row = the server's defaults (PARLEY_FILES_MAX_BYTES, every type).
CREATE TABLE app_file_settings (
    app_id bigint PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
    max_file_bytes bigint CHECK (max_file_bytes > 0),
    -- MIME types or `type/*` patterns; NULL = every type.
    allowed_types text[],
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- The bytes, one row per distinct content within an app. `storage_key` carries a random suffix: a blob stored
-- again after the sweeper removed its predecessor never shares the predecessor's storage object, so a late
-- delete of the old object cannot remove the new one.
CREATE TABLE file_blobs (
    app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    size bigint NOT NULL CHECK (size >= 0),
    storage_key text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    -- Touched by every upload that reuses the blob (under the row lock), so the sweeper, which re-checks it on
    -- the locked row, never removes a blob an upload is about to reference.
    last_used_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, sha256)
);
CREATE INDEX file_blobs_last_used ON file_blobs (last_used_at);

-- One row per upload: its own key, owner and name, even when the content is shared.
CREATE TABLE files (
    object_key text PRIMARY KEY,
    app_id bigint NOT NULL,
    owner_id text NOT NULL,
    sha256 text NOT NULL,
    size bigint NOT NULL,
    mime_type text NOT NULL,
    ext text NOT NULL,
    name text NOT NULL,
    -- The key of this file's thumbnail (itself a row here); a thumbnail lives as long as its file.
    thumbnail_key text,
    created_at timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (app_id, sha256) REFERENCES file_blobs (app_id, sha256)
);
CREATE INDEX files_blob ON files (app_id, sha256);
CREATE INDEX files_created_at ON files (created_at);
CREATE INDEX files_thumbnail ON files (thumbnail_key) WHERE thumbnail_key IS NOT NULL;

-- Storage objects whose rows are gone, deleted from storage by the sweeper (the row is removed in the same
-- transaction as the blob row, so a crash or an unreachable S3 never leaks an object).
CREATE TABLE file_storage_garbage (
    storage_key text PRIMARY KEY,
    queued_at timestamptz NOT NULL DEFAULT now(),
    attempts integer NOT NULL DEFAULT 0
);

-- The object keys a message's content references (image/video/audio/file and forwards of them). A generated
-- column: revoking a message wipes its content, and with it the reference.
CREATE FUNCTION parley_content_object_keys(c jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN jsonb_typeof(c) = 'object'
        THEN array_remove(ARRAY[c ->> 'objectKey', c ->> 'thumbnailObjectKey', c ->> 'coverObjectKey'], NULL)
        ELSE '{}'::text[] END
$$;

CREATE FUNCTION parley_message_object_keys(p_msg_type text, p_content text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE
        WHEN p_content IS NULL THEN NULL
        WHEN p_msg_type IN ('image', 'video', 'audio', 'file') THEN
            nullif(parley_content_object_keys(p_content::jsonb), '{}')
        WHEN p_msg_type = 'forward' AND jsonb_typeof(p_content::jsonb -> 'messages') = 'array' THEN
            (SELECT nullif(array_agg(DISTINCT k), '{}')
             FROM jsonb_array_elements(p_content::jsonb -> 'messages') AS m,
                  unnest(parley_content_object_keys(m -> 'content')) AS k)
        ELSE NULL
    END
$$;

ALTER TABLE messages ADD COLUMN object_keys text[]
    GENERATED ALWAYS AS (parley_message_object_keys(msg_type, content)) STORED;
CREATE INDEX messages_object_keys ON messages USING gin (object_keys) WHERE object_keys IS NOT NULL;
CREATE INDEX users_avatar ON users (avatar) WHERE avatar IS NOT NULL;
CREATE INDEX groups_avatar_key ON groups (avatar_key) WHERE avatar_key IS NOT NULL;
