-- Releases and update checks (issue 7): the builds an app publishes per platform and channel, which
-- GET /api/update/check offers to clients.
--
-- version_code increases per (app, platform, channel): a publish must be above every release ever published
-- there, withdrawn ones included (a device may have installed a withdrawn build, and stores never reuse a
-- build number). The service checks it under an advisory lock; the unique key is the last line of defence.
-- Withdrawing keeps the row (withdrawn_at set): it is history, and it keeps the versionCode taken.
-- Every change notifies `parley_release_changed` (payload: the app id) so that running servers drop their
-- cached release list at once.

CREATE TABLE releases (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    platform text NOT NULL CHECK (platform ~ '^[a-z0-9_-]{1,32}$'),
    -- '' is the default channel; others (beta, internal, ...) are separate version lines.
    channel text NOT NULL DEFAULT '' CHECK (channel ~ '^[a-z0-9_.-]{0,32}$'),
    version_code bigint NOT NULL CHECK (version_code >= 0),
    version_name text NOT NULL CHECK (length(version_name) BETWEEN 1 AND 64),
    release_notes text NOT NULL DEFAULT '',
    app_store_url text,
    download_url text,
    -- Callers below this versionCode must update (forceUpdate); at most the release's own version_code.
    min_supported_version_code bigint CHECK (min_supported_version_code BETWEEN 0 AND version_code),
    -- Offered to callers whose stable bucket (0-99) is below this; 0 = published but offered to nobody yet.
    rollout_percent integer NOT NULL DEFAULT 100 CHECK (rollout_percent BETWEEN 0 AND 100),
    published_at timestamptz NOT NULL DEFAULT now(),
    withdrawn_at timestamptz,
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK (app_store_url IS NOT NULL OR download_url IS NOT NULL),
    UNIQUE (app_id, platform, channel, version_code)
);
