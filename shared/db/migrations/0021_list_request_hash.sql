-- What a creation with an Idempotency-Key sent (its settings and every entry, hashed): a retry that sends something
-- else under the same key is refused (422) instead of being answered with the first list.
ALTER TABLE verification_lists ADD COLUMN request_hash text;
