-- The keys of @Once work that committed, each recorded in the work's own transaction; kept for lease.once.retention.
CREATE TABLE IF NOT EXISTS lease_once (
    once_key VARCHAR(255)             NOT NULL PRIMARY KEY,
    done_at  TIMESTAMP WITH TIME ZONE NOT NULL,
    token    BIGINT
);
