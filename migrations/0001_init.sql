-- Parley's first migration: instance-wide settings and facts (schema generation, install id, ...).
-- Features add their own tables in later migrations; applied migrations are never edited.
CREATE TABLE parley_meta (
    key text PRIMARY KEY,
    value text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

INSERT INTO parley_meta (key, value) VALUES ('installed_at', now()::text);
