-- Reports (issue 19): a user reports another user, a message or a group to the app's operators (App Store review
-- guideline 1.2). A reported message is copied into the report as its members saw it then, so revoking it later
-- does not take the evidence away. One report per reporter and target: reporting again changes nothing.
CREATE TABLE reports (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    reporter_id text NOT NULL,
    target_type text NOT NULL CHECK (target_type IN ('user', 'message', 'group')),
    target_id text NOT NULL,
    reason text NOT NULL,
    note text,
    -- The message as the wire shows it (IMMessage), for message reports only.
    message_snapshot jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (app_id, reporter_id, target_type, target_id)
);
CREATE INDEX reports_app_created ON reports (app_id, created_at DESC, id DESC);
