-- Telegram bridge: the bot's settings and its two cursors (the update
-- offset and the office event sequence relayed so far), the allowlist of
-- Telegram users mapped to human members, the chat ↔ channel links, the
-- map between Telegram messages and office messages, and the durable
-- outbox.
CREATE TABLE telegram_bot (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    token TEXT NOT NULL DEFAULT '',
    mode TEXT NOT NULL DEFAULT 'polling' CHECK (mode IN ('polling', 'webhook')),
    webhook_url TEXT NOT NULL DEFAULT '',
    webhook_secret TEXT NOT NULL DEFAULT '',
    bot_id BIGINT NOT NULL DEFAULT 0,
    bot_username TEXT NOT NULL DEFAULT '',
    update_offset BIGINT NOT NULL DEFAULT 0,
    relay_cursor BIGINT,
    updated_at TIMESTAMPTZ
);
INSERT INTO telegram_bot (id) VALUES (1);

CREATE TABLE telegram_users (
    telegram_user_id BIGINT PRIMARY KEY,
    member_id BIGINT NOT NULL REFERENCES members(id),
    can_approve BOOLEAN NOT NULL DEFAULT FALSE,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX telegram_users_member ON telegram_users(member_id);

CREATE TABLE telegram_chats (
    chat_id BIGINT PRIMARY KEY,
    channel_id BIGINT NOT NULL REFERENCES channels(id),
    type TEXT NOT NULL DEFAULT '',
    title TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX telegram_chats_channel ON telegram_chats(channel_id);

-- One row per Telegram message the bridge knows: 'in' came from Telegram
-- and became message_id; 'out' was sent by the bridge for message_id or
-- for an approval.
CREATE TABLE telegram_messages (
    chat_id BIGINT NOT NULL,
    tg_message_id BIGINT NOT NULL,
    direction TEXT NOT NULL CHECK (direction IN ('in', 'out')),
    message_id BIGINT REFERENCES messages(id),
    approval_id BIGINT,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (chat_id, tg_message_id)
);
CREATE INDEX telegram_messages_message ON telegram_messages(message_id);
CREATE INDEX telegram_messages_approval ON telegram_messages(approval_id);

CREATE TABLE telegram_outbox (
    id BIGSERIAL PRIMARY KEY,
    chat_id BIGINT NOT NULL,
    method TEXT NOT NULL CHECK (method IN ('send', 'edit_markup')),
    text TEXT NOT NULL DEFAULT '',
    markup TEXT NOT NULL DEFAULT '',
    reply_to BIGINT NOT NULL DEFAULT 0,
    message_id BIGINT,
    approval_id BIGINT,
    part INTEGER NOT NULL DEFAULT 0,
    state TEXT NOT NULL CHECK (state IN ('pending', 'sending', 'sent', 'failed', 'uncertain')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMPTZ NOT NULL,
    last_error TEXT NOT NULL DEFAULT '',
    tg_message_id BIGINT NOT NULL DEFAULT 0,
    created_at TIMESTAMPTZ NOT NULL,
    sent_at TIMESTAMPTZ
);
CREATE INDEX telegram_outbox_state ON telegram_outbox(state, id);
