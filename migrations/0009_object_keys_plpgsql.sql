-- The generated column messages.object_keys calls parley_message_object_keys for every stored row. As a SQL
-- function it cannot be inlined there, so PostgreSQL parsed and planned its body on every call: about a quarter
-- of the CPU of a batch of eight text messages (perf on the backend running parley_send_messages). In PL/pgSQL the
-- plans are kept per session, and the common case (a message without attachments) returns at the first test.
-- Same signature, same results: the column and its index keep their values and need no rewrite.
CREATE OR REPLACE FUNCTION parley_message_object_keys(p_msg_type text, p_content text) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    IF p_content IS NULL THEN
        RETURN NULL;
    ELSIF p_msg_type IN ('image', 'video', 'audio', 'file') THEN
        RETURN nullif(parley_content_object_keys(p_content::jsonb), '{}');
    ELSIF p_msg_type = 'forward' AND jsonb_typeof(p_content::jsonb -> 'messages') = 'array' THEN
        RETURN (SELECT nullif(array_agg(DISTINCT k), '{}')
                FROM jsonb_array_elements(p_content::jsonb -> 'messages') AS m,
                     unnest(parley_content_object_keys(m -> 'content')) AS k);
    END IF;
    RETURN NULL;
END;
$$;
