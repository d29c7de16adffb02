-- Groups that communities run (issue 22): the group's profile texts and the app's own data.
--
-- `announcement` and `introduction` are '' when unset (constant defaults add the columns without a rewrite);
-- `ex` is the JSON text the server wrote (NULL when unset), as `users.ex`.
ALTER TABLE groups
    ADD COLUMN announcement text NOT NULL DEFAULT '',
    ADD COLUMN introduction text NOT NULL DEFAULT '',
    ADD COLUMN ex text;
