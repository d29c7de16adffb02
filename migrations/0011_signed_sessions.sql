-- Sessions remember how they were opened and the device's language.
--
-- origin: 'password' (register, login) or 'signed' (POST /api/im/auth/login from the app's backend). A signed
-- login for a user who already holds a signed session on the same platform and device renews that session
-- instead of opening a new one, so an app's silent token renewal never displaces its own socket.
--
-- language: the language the device asked for at login (Accept-Language, or the signed login's `language`):
-- texts the server writes for this device (the account_conflict notice, push previews) use it.
ALTER TABLE sessions
    ADD COLUMN origin text NOT NULL DEFAULT 'password' CHECK (origin IN ('password', 'signed')),
    ADD COLUMN language text NOT NULL DEFAULT 'en' CHECK (language IN ('en', 'zh'));
