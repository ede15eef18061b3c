-- Extensions first: later migrations build trigram indexes and accent-insensitive search on them.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
