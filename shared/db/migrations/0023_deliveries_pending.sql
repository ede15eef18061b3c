-- The outbox looks for pending deliveries long overdue (their job lost with Redis's data) on every dispatch run:
-- by the pending ones only, however many were delivered.
CREATE INDEX deliveries_pending_idx ON deliveries (created_at) WHERE state = 'pending';
