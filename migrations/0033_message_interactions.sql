-- What members do with messages besides sending them (issue 22): reactions, pinned messages, deleting a message for
-- oneself, and marking a conversation unread.

-- One row per message, emoji and user: reacting again with the same emoji changes nothing. A message's counts are
-- read for a page of history at a time (by message id).
CREATE TABLE message_reactions (
    app_id bigint NOT NULL,
    message_id bigint NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    emoji text NOT NULL,
    user_id text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (message_id, emoji, user_id)
);
-- An account deletion removes the user's reactions.
CREATE INDEX message_reactions_by_user ON message_reactions (app_id, user_id);

-- Messages pinned in a conversation, listed newest pin first. Every member sees the same list.
CREATE TABLE conversation_pins (
    app_id bigint NOT NULL,
    conversation_id text NOT NULL,
    message_id bigint NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    pinned_by text NOT NULL,
    pinned_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, conversation_id, message_id),
    FOREIGN KEY (app_id, conversation_id) REFERENCES conversations (app_id, id) ON DELETE CASCADE
);
CREATE INDEX conversation_pins_by_message ON conversation_pins (message_id);

-- Messages a user deleted for themselves only: their history and search skip them; the other members keep them.
CREATE TABLE message_hidden (
    app_id bigint NOT NULL,
    user_id text NOT NULL,
    message_id bigint NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    hidden_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, user_id, message_id)
);
CREATE INDEX message_hidden_by_message ON message_hidden (message_id);

-- A conversation the user marked unread: shown as unread until they read it again (any read mark clears it). A
-- constant default adds the column without a rewrite.
ALTER TABLE conversation_members ADD COLUMN marked_unread boolean NOT NULL DEFAULT false;

-- Reactions and pins are conversation-wide changes that sync replays; a message deleted for oneself is a change of
-- that user's only. NOT VALID then VALIDATE: checking the existing rows does not block writers.
ALTER TABLE changes DROP CONSTRAINT changes_kind_check;
ALTER TABLE changes ADD CONSTRAINT changes_kind_check CHECK (kind IN (
    'revoke', 'edit', 'read', 'conversation', 'membership',
    'friend_request', 'friend_request_rejected', 'friend_request_withdrawn', 'friend_added', 'friend_removed',
    'friend_updated', 'block', 'unblock', 'profile', 'group_join_request', 'group_join_request_handled',
    'reaction', 'message_pinned', 'message_unpinned', 'message_deleted')) NOT VALID;
ALTER TABLE changes VALIDATE CONSTRAINT changes_kind_check;
