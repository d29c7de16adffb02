-- Webhooks (issue 20): callbacks to an app's own backend. `before_send` is called synchronously by the send path;
-- every other event goes through the durable outbox below, queued by triggers in the transaction of the change
-- (as push jobs are, migrations/0008), so no feature knows webhooks and no committed change loses its event.

-- One row per app that has webhooks. No row, or enabled = false: nothing is queued and nothing is called.
CREATE TABLE app_webhooks (
    app_id bigint PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
    url text NOT NULL CHECK (url ~ '^https?://'),
    events text[] NOT NULL DEFAULT '{}' CHECK (events <@ ARRAY[
        'before_send', 'after_send', 'after_revoke', 'after_edit', 'login', 'logout', 'user_deleted',
        'group_created', 'group_member_added', 'group_member_removed', 'group_dissolved',
        'friend_request', 'friend_added', 'friend_removed', 'report_created']::text[]),
    timeout_ms integer NOT NULL DEFAULT 2000 CHECK (timeout_ms BETWEEN 100 AND 10000),
    -- What before_send does when the backend times out, fails or answers nonsense: let the message through, or not.
    on_failure text NOT NULL DEFAULT 'allow' CHECK (on_failure IN ('allow', 'deny')),
    -- After-events per call: 1 POSTs each event alone; more lets one call carry up to that many (`{"events": [...]}`),
    -- which a busy app needs: a call per event costs the server about as much as the message it reports.
    batch_size integer NOT NULL DEFAULT 1 CHECK (batch_size BETWEEN 1 AND 100),
    enabled boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Serving instances cache the settings (before_send is checked in memory on every send): every change notifies.
CREATE FUNCTION parley_notify_webhook_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('parley_webhook_changed', coalesce(NEW.app_id, OLD.app_id)::text);
    RETURN NULL;
END;
$$;
CREATE TRIGGER app_webhooks_changed AFTER INSERT OR UPDATE OR DELETE ON app_webhooks
FOR EACH ROW EXECUTE FUNCTION parley_notify_webhook_changed();

-- The outbox. One row per event; delivered in id order per (app, ordering_key): only the oldest pending job of a
-- key may be leased, so the next waits until it is delivered or dead. `id` is the event's identity: the
-- idempotency key (`evt_<id>`) is the same on every attempt.
CREATE TABLE webhook_jobs (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    event text NOT NULL,
    -- The conversation id for message and group events, the user id for user events.
    ordering_key text NOT NULL,
    -- The event's data, built by the trigger from the changed row (json keeps a message's content as stored).
    payload json NOT NULL,
    state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dead')),
    attempts integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    leased_until timestamptz,
    last_status integer,
    last_error text,
    created_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);
CREATE INDEX webhook_jobs_due ON webhook_jobs (next_attempt_at, id) WHERE state = 'pending';
CREATE INDEX webhook_jobs_key ON webhook_jobs (app_id, ordering_key, id) WHERE state = 'pending';
-- Finished events for the admin listing: partial, so queuing an event (in the sending transaction) does not touch it.
CREATE INDEX webhook_jobs_listing ON webhook_jobs (app_id, state, id) WHERE state <> 'pending';
CREATE INDEX webhook_jobs_finished ON webhook_jobs (finished_at) WHERE state <> 'pending';

-- Whether any app wants `event`: checked first by every trigger, so with no webhook configured a trigger costs
-- one lookup in a small table and queues nothing.
CREATE FUNCTION parley_webhook_wanted(p_event text) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM app_webhooks WHERE enabled AND p_event = ANY (events))
$$;

CREATE FUNCTION parley_webhook_app_wants(p_app bigint, p_event text) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM app_webhooks WHERE app_id = p_app AND enabled AND p_event = ANY (events))
$$;

CREATE FUNCTION parley_queue_webhook(p_app bigint, p_event text, p_key text, p_payload json) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO webhook_jobs (app_id, event, ordering_key, payload)
    SELECT p_app, p_event, p_key, p_payload WHERE parley_webhook_app_wants(p_app, p_event)
$$;

-- A message as webhooks carry it: content and extra as their JSON documents (a text message's content is its
-- string), createdAt/editedAt in epoch milliseconds, `system` for server-written notify messages.
CREATE FUNCTION parley_webhook_message(m messages) RETURNS json
LANGUAGE sql IMMUTABLE AS $$
    SELECT json_build_object(
        'id', m.id::text, 'conversationId', m.conversation_id, 'seq', m.seq, 'fromId', m.from_id, 'toId', m.to_id,
        'chatType', m.chat_type, 'msgType', m.msg_type, 'content', m.content::json, 'extra', m.extra::json,
        'clientMsgId', m.client_msg_id, 'system', m.msg_type = 'notify',
        'createdAt', floor(extract(epoch FROM m.created_at) * 1000)::bigint,
        'editedAt', floor(extract(epoch FROM m.edited_at) * 1000)::bigint)
$$;

-- after_send: one statement per batch of sends (parley_send_messages), so its jobs go in with one insert.
CREATE FUNCTION parley_webhook_after_send() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT parley_webhook_wanted('after_send') THEN
        RETURN NULL;
    END IF;
    INSERT INTO webhook_jobs (app_id, event, ordering_key, payload)
    SELECT m.app_id, 'after_send', m.conversation_id, json_build_object('message', parley_webhook_message(m))
    FROM stored_messages m
    WHERE m.app_id IN (SELECT app_id FROM app_webhooks WHERE enabled AND 'after_send' = ANY (events))
    ORDER BY m.id;
    RETURN NULL;
END;
$$;
CREATE TRIGGER messages_webhook_after_send AFTER INSERT ON messages
REFERENCING NEW TABLE AS stored_messages
FOR EACH STATEMENT EXECUTE FUNCTION parley_webhook_after_send();

-- after_revoke and after_edit: revokes and edits update one row; the WHEN clauses keep other updates free.
CREATE FUNCTION parley_webhook_message_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_ARGV[0] = 'after_revoke' THEN
        PERFORM parley_queue_webhook(NEW.app_id, 'after_revoke', NEW.conversation_id, json_build_object(
            'messageId', NEW.id::text, 'conversationId', NEW.conversation_id, 'seq', NEW.seq,
            'fromId', NEW.from_id, 'operatorId', NEW.revoked_by,
            'revokedAt', floor(extract(epoch FROM NEW.revoked_at) * 1000)::bigint));
    ELSE
        PERFORM parley_queue_webhook(NEW.app_id, 'after_edit', NEW.conversation_id,
                                     json_build_object('message', parley_webhook_message(NEW)));
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER messages_webhook_after_revoke AFTER UPDATE ON messages
FOR EACH ROW WHEN (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL)
EXECUTE FUNCTION parley_webhook_message_changed('after_revoke');
CREATE TRIGGER messages_webhook_after_edit AFTER UPDATE ON messages
FOR EACH ROW WHEN (NEW.revoked_at IS NULL AND NEW.edited_at IS DISTINCT FROM OLD.edited_at)
EXECUTE FUNCTION parley_webhook_message_changed('after_edit');

-- login (a session created) and logout (a session ended, with its reason).
CREATE FUNCTION parley_webhook_session() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM parley_queue_webhook(NEW.app_id, TG_ARGV[0], NEW.user_id, json_build_object(
        'userId', NEW.user_id, 'sessionId', NEW.id, 'platform', NEW.platform, 'deviceId', NEW.device_id,
        'deviceModel', NEW.device_model,
        'reason', NEW.end_reason,
        'at', floor(extract(epoch FROM coalesce(NEW.ended_at, NEW.created_at)) * 1000)::bigint));
    RETURN NULL;
END;
$$;
CREATE TRIGGER sessions_webhook_login AFTER INSERT ON sessions
FOR EACH ROW EXECUTE FUNCTION parley_webhook_session('login');
CREATE TRIGGER sessions_webhook_logout AFTER UPDATE ON sessions
FOR EACH ROW WHEN (OLD.ended_at IS NULL AND NEW.ended_at IS NOT NULL)
EXECUTE FUNCTION parley_webhook_session('logout');

-- user_deleted: the account deletion anonymises the row and sets deleted_at (migrations/0021).
CREATE FUNCTION parley_webhook_user_deleted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM parley_queue_webhook(NEW.app_id, 'user_deleted', NEW.id, json_build_object(
        'userId', NEW.id, 'deletedAt', floor(extract(epoch FROM NEW.deleted_at) * 1000)::bigint));
    RETURN NULL;
END;
$$;
CREATE TRIGGER users_webhook_deleted AFTER UPDATE ON users
FOR EACH ROW WHEN (OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL)
EXECUTE FUNCTION parley_webhook_user_deleted();

-- Groups: created, dissolved, a member added or removed (a group's member rows have no peer; 1:1 rows never fire).
CREATE FUNCTION parley_webhook_group() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM parley_queue_webhook(NEW.app_id, TG_ARGV[0], 'sg:' || NEW.id, json_build_object(
        'groupId', NEW.id, 'conversationId', 'sg:' || NEW.id, 'name', NEW.name, 'ownerId', NEW.owner_id,
        'at', floor(extract(epoch FROM coalesce(NEW.dissolved_at, NEW.created_at)) * 1000)::bigint));
    RETURN NULL;
END;
$$;
CREATE TRIGGER groups_webhook_created AFTER INSERT ON groups
FOR EACH ROW EXECUTE FUNCTION parley_webhook_group('group_created');
CREATE TRIGGER groups_webhook_dissolved AFTER UPDATE ON groups
FOR EACH ROW WHEN (OLD.dissolved_at IS NULL AND NEW.dissolved_at IS NOT NULL)
EXECUTE FUNCTION parley_webhook_group('group_dissolved');

CREATE FUNCTION parley_webhook_group_member() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    member conversation_members := CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
BEGIN
    PERFORM parley_queue_webhook(member.app_id, TG_ARGV[0], member.conversation_id, json_build_object(
        'groupId', substr(member.conversation_id, 4), 'conversationId', member.conversation_id, 'userId', member.user_id,
        'role', member.role));
    RETURN NULL;
END;
$$;
CREATE TRIGGER conversation_members_webhook_added AFTER INSERT ON conversation_members
FOR EACH ROW WHEN (NEW.peer_id IS NULL)
EXECUTE FUNCTION parley_webhook_group_member('group_member_added');
CREATE TRIGGER conversation_members_webhook_removed AFTER DELETE ON conversation_members
FOR EACH ROW WHEN (OLD.peer_id IS NULL)
EXECUTE FUNCTION parley_webhook_group_member('group_member_removed');

-- Friends: a request sent; a friendship made or ended (two rows per friendship: the one whose user_id sorts first
-- speaks for both, so each change is one event).
CREATE FUNCTION parley_webhook_friend_request() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM parley_queue_webhook(NEW.app_id, 'friend_request', NEW.from_id, json_build_object(
        'requestId', NEW.id::text, 'fromId', NEW.from_id, 'toId', NEW.to_id, 'message', NEW.message,
        'status', NEW.status, 'createdAt', floor(extract(epoch FROM NEW.created_at) * 1000)::bigint));
    RETURN NULL;
END;
$$;
CREATE TRIGGER friend_requests_webhook AFTER INSERT ON friend_requests
FOR EACH ROW EXECUTE FUNCTION parley_webhook_friend_request();

CREATE FUNCTION parley_webhook_friendship() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM parley_queue_webhook(NEW.app_id, TG_ARGV[0], NEW.user_id,
                                 json_build_object('userId', NEW.user_id, 'friendId', NEW.friend_id));
    RETURN NULL;
END;
$$;
CREATE TRIGGER friendships_webhook_added AFTER INSERT ON friendships
FOR EACH ROW WHEN (NEW.active AND NEW.user_id < NEW.friend_id)
EXECUTE FUNCTION parley_webhook_friendship('friend_added');
CREATE TRIGGER friendships_webhook_readded AFTER UPDATE ON friendships
FOR EACH ROW WHEN (NOT OLD.active AND NEW.active AND NEW.user_id < NEW.friend_id)
EXECUTE FUNCTION parley_webhook_friendship('friend_added');
CREATE TRIGGER friendships_webhook_removed AFTER UPDATE ON friendships
FOR EACH ROW WHEN (OLD.active AND NOT NEW.active AND NEW.user_id < NEW.friend_id)
EXECUTE FUNCTION parley_webhook_friendship('friend_removed');

-- report_created: the report as filed (a reported message's snapshot included).
CREATE FUNCTION parley_webhook_report() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM parley_queue_webhook(NEW.app_id, 'report_created', NEW.reporter_id, json_build_object(
        'reportId', NEW.id::text, 'reporterId', NEW.reporter_id, 'targetType', NEW.target_type,
        'targetId', NEW.target_id, 'reason', NEW.reason, 'note', NEW.note, 'message', NEW.message_snapshot,
        'createdAt', floor(extract(epoch FROM NEW.created_at) * 1000)::bigint));
    RETURN NULL;
END;
$$;
CREATE TRIGGER reports_webhook AFTER INSERT ON reports
FOR EACH ROW EXECUTE FUNCTION parley_webhook_report();
