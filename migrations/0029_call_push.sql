-- Issue 21: pushes about a call, not a message (the VoIP push that rings an offline callee, and the push that stops
-- the ringing when the call ends before they answered). They share the message outbox: its leases, retries, backoff,
-- delivery records and attempts log. A call job has no message; `call` says what to push, to whom:
-- {"action": "invite"|"cancel", "callId", "callerId", "mediaType", "timeoutSeconds", "reason", "userIds": [...],
--  "exceptSessionId"}. It is written by ParleyApp's call notifier in the transaction of the call's transition, so a
-- push exists exactly when the transition does. Nullable, no default: no rewrite of the table.
ALTER TABLE push_jobs
    ALTER COLUMN message_id DROP NOT NULL,
    ADD COLUMN call jsonb,
    ADD CONSTRAINT push_jobs_one_subject CHECK ((message_id IS NULL) <> (call IS NULL));
