-- The seed apps' push and file flows (issue 17).

-- Push tokens: the app's own id for the user as the device reported it (`uid` of `POST /user/device/push-token`;
-- seed 000 sends its business uid `12345` while its IM user is `tb_12345`). Recorded for the app's support tools,
-- never used to choose whom a token is bound to: that is always the authenticated caller.
ALTER TABLE push_tokens ADD COLUMN app_uid text CHECK (length(app_uid) BETWEEN 1 AND 128);
