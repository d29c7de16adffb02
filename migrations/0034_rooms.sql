-- Chat rooms (issue 22): rooms without membership. Whoever is inside (a WebSocket that sent `room_enter`) gets the
-- room's messages; nothing else is kept per user. Room ids are numbers, as seed 002's SDK passes them; every lookup
-- is scoped by the app.
CREATE TABLE rooms (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id bigint NOT NULL,
    name text NOT NULL,
    -- NULL: made by the app's backend (`POST /api/admin/rooms`) without naming a creator.
    creator_id text,
    -- The app's own data: the JSON text the server wrote (NULL when unset), as `users.ex`.
    ex text,
    created_at timestamptz NOT NULL DEFAULT now(),
    -- Set once by a dismiss; a dismissed room is gone for clients (1505) and its history with it.
    dismissed_at timestamptz
);
CREATE INDEX rooms_app ON rooms (app_id, id);

-- A bounded recent history: readers only ever see a room's newest PARLEY_ROOM_HISTORY_MESSAGES within
-- PARLEY_ROOM_HISTORY_HOURS; a periodic prune deletes what falls outside, so the table stays small.
-- `command`: a `custom` message with `noUnread` ("X entered the room"): delivered, never in history.
CREATE TABLE room_messages (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    app_id bigint NOT NULL,
    room_id bigint NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,
    from_id text NOT NULL,
    msg_type text NOT NULL,
    -- `content` and `extra` as clients get them (the wire text), so no read re-encodes them.
    content text NOT NULL,
    extra text,
    client_msg_id text,
    command boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX room_messages_history ON room_messages (room_id, id) WHERE NOT command;
CREATE INDEX room_messages_room ON room_messages (room_id, id);
CREATE INDEX room_messages_age ON room_messages (created_at);

-- How many connections each instance has inside each room, written by the instance every few seconds when it
-- changed; the online count of a room is the sum over instances heard from lately (`realtime_instances`).
CREATE TABLE room_online (
    instance_id text NOT NULL REFERENCES realtime_instances (id) ON DELETE CASCADE,
    app_id bigint NOT NULL,
    room_id bigint NOT NULL,
    online integer NOT NULL,
    PRIMARY KEY (room_id, instance_id)
);
