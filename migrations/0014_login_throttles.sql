-- Failed logins slow the guesser down without locking the owner out.
--
-- login_failures counted failures per account and locked it for everyone once there were 10 in 15 minutes: ten
-- wrong passwords from anywhere made the right one answer 429 for the owner too, and parallel guesses could all
-- pass the count before any of their failures was written. Throttles count per account and source instead:
--   'address:<client address, IPv6 by /64>'   a client that has not logged in to this account from this device
--   'account'                                  every such client together (a larger allowance: spread guessing)
--   'device:<device id>'                       a device that already had a session of the account: only its own
--                                              failures slow it, so nobody else's guessing delays the owner
-- After `free` failures each attempt waits the first delay (1 s by default), twice that, ... up to a maximum; a source's failures are forgotten
-- once it has been quiet for a whole window after its last delay. An attempt is
-- counted before the password is checked, under the rows' locks (parley_login_attempt), so parallel guesses cannot
-- race past the count; a successful login clears its own source.
CREATE TABLE login_throttles (
    app_id bigint NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    username text NOT NULL,
    source text NOT NULL,
    failures integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, username, source)
);
-- The housekeeping purge of quiet sources.
CREATE INDEX login_throttles_next_attempt_at ON login_throttles (next_attempt_at);

DROP TABLE login_failures;

-- 0 when the attempt may go ahead (it is then counted as a failure until the caller clears it), otherwise the
-- seconds until the most delayed of the sources admits one. p_free[i] is the allowance of p_sources[i].
CREATE FUNCTION parley_login_attempt(p_app bigint, p_username text, p_sources text[], p_free integer[],
                                     p_first_delay_seconds integer, p_window_seconds integer,
                                     p_max_delay_seconds integer)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    wait double precision;
    -- The clock, not now(): now() is when the transaction began, and an attempt that waited for the rows' locks
    -- began before the one it waited for set next_attempt_at, so it would see a wait that is not there.
    moment timestamptz := clock_timestamp();
BEGIN
    INSERT INTO login_throttles (app_id, username, source, next_attempt_at)
    SELECT p_app, p_username, source, moment FROM unnest(p_sources) AS source ORDER BY source
    ON CONFLICT DO NOTHING;
    -- Locked in one order, so two attempts on the same sources never deadlock.
    PERFORM 1 FROM login_throttles
    WHERE app_id = p_app AND username = p_username AND source = ANY (p_sources)
    ORDER BY source FOR UPDATE;
    moment := clock_timestamp();
    -- A source quiet for a whole window after its last delay starts afresh.
    UPDATE login_throttles SET failures = 0
    WHERE app_id = p_app AND username = p_username AND source = ANY (p_sources) AND failures > 0
      AND next_attempt_at < moment - make_interval(secs => p_window_seconds);
    SELECT max(extract(epoch FROM next_attempt_at - moment)) INTO wait FROM login_throttles
    WHERE app_id = p_app AND username = p_username AND source = ANY (p_sources);
    IF wait > 0 THEN
        RETURN greatest(1, ceil(wait))::integer;
    END IF;
    UPDATE login_throttles t
    SET failures = t.failures + 1,
        next_attempt_at = moment + make_interval(secs => CASE
            WHEN t.failures + 1 <= a.free THEN 0
            ELSE least(p_max_delay_seconds, p_first_delay_seconds * power(2, least(t.failures - a.free, 30)))::integer
            END)
    FROM unnest(p_sources, p_free) AS a (source, free)
    WHERE t.app_id = p_app AND t.username = p_username AND t.source = a.source;
    RETURN 0;
END $$;

-- "Already had a session on this device" is asked at every login, over ended sessions too.
CREATE INDEX sessions_by_user_device ON sessions (app_id, user_id, device_id) WHERE device_id <> '';
