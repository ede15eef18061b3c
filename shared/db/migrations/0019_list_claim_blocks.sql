-- A list's chunks claimed its addresses in domain order: with more of a large domain than the chunks in flight hold,
-- every chunk in flight waited on that domain's MX host while the other hosts idled, and then the reverse, so the
-- hosts worked in turns rather than side by side (a 100,000-address list took 2.67 × the per-MX lower bound).
-- Each address now has a claim order, set at upload: a domain's addresses in blocks of a chunk's size (by address),
-- each block placed by a hash of (domain, block number). A large domain's blocks are spread over the list's whole
-- run, so its host has work queued from the first chunk to the last, while a chunk still holds whole blocks of a
-- few domains (SMTP sessions carry many RCPTs; a slow domain stalls the chunks of its own blocks, not every lane).
-- Addresses of lists uploaded before have none and are claimed first, in domain order as before.
ALTER TABLE verification_list_addresses ADD COLUMN claim_order integer;
--> statement-breakpoint
DROP INDEX verification_list_addresses_unclaimed_idx;
--> statement-breakpoint
CREATE INDEX verification_list_addresses_unclaimed_idx
  ON verification_list_addresses (list_id, claim_order NULLS FIRST, domain, address) WHERE chunk IS NULL;
