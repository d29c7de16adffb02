-- User search (issue 19, `GET /api/users/search`): a nickname prefix, compared lower-cased, paged by
-- (lower(nickname), id). One index serves both the prefix, a range of lower(nickname), and the keyset order. Its
-- C collation orders by bytes, which for UTF-8 is code-point order whatever the database's locale, so the strings
-- that start with a prefix are exactly one range of it. (Exact usernames and ids have their own unique indexes.)
CREATE INDEX users_nickname_search ON users (app_id, lower(nickname) COLLATE "C", id COLLATE "C");
