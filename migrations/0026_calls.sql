-- Call signalling (issue 21): a call and its participants. Every transition (invite, accept, reject, cancel,
-- hangup, timeout) is one transaction that first locks the call row, so two accepts on two instances, or an accept
-- racing the timeout sweep, resolve to one outcome; the state lives here, so a restart loses no timeout.
CREATE TABLE calls (
    id text PRIMARY KEY,
    app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    caller_id text NOT NULL,
    media_type text NOT NULL CHECK (media_type IN ('audio', 'video')),
    -- The app's own data (its RTC room or token), handed to every callee as sent.
    user_data text NOT NULL DEFAULT '',
    state text NOT NULL CHECK (state IN ('ringing', 'active', 'ended')),
    timeout_seconds integer NOT NULL,
    -- When the callees still ringing time out; NULL once nobody rings (the sweep's index holds only due work).
    timeout_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    -- The first accept.
    started_at timestamptz,
    ended_at timestamptz,
    end_reason text CHECK (end_reason IN ('hangup', 'cancelled', 'rejected', 'busy', 'timeout')),
    -- Whose action ended it (NULL for a timeout).
    ended_by text
);
CREATE INDEX calls_timeouts ON calls (timeout_at) WHERE timeout_at IS NOT NULL;
-- Pruning of ended calls.
CREATE INDEX calls_ended ON calls (ended_at) WHERE ended_at IS NOT NULL;

CREATE TABLE call_participants (
    call_id text NOT NULL REFERENCES calls (id) ON DELETE CASCADE,
    app_id bigint NOT NULL,
    user_id text NOT NULL,
    -- The order of the invitation (the caller is 0).
    position smallint NOT NULL,
    state text NOT NULL
        CHECK (state IN ('ringing', 'accepted', 'rejected', 'busy', 'left', 'timeout', 'cancelled')),
    -- The session (device) that answered: the user's other devices are told it was answered elsewhere.
    accepted_session_id text,
    joined_at timestamptz,
    left_at timestamptz,
    PRIMARY KEY (call_id, user_id)
);
-- A user's calls that still ring or are under way: the busy check at an invite and `GET /api/calls`.
CREATE INDEX call_participants_live ON call_participants (app_id, user_id) WHERE state IN ('ringing', 'accepted');
