-- One row per lease name. With lease.jdbc.token: per-name (the default) the token column is each name's fencing
-- counter and rows are never deleted. With lease.jdbc.token: shared, the row named '' (an empty name, which no lease
-- can have) is the counter every grant draws its token from, and lease.jdbc.delete-idle-after may delete idle rows.
-- With lease.jdbc.delete-idle-after the backend also creates an index on expires_at (index-<platform>.sql).
-- expires_at is compared with the database clock only; TIMESTAMP WITH TIME ZONE keeps sessions with different
-- time zones in agreement.
CREATE TABLE IF NOT EXISTS ${table} (
    name       VARCHAR(255)             NOT NULL PRIMARY KEY,
    owner      VARCHAR(64),
    token      BIGINT                   NOT NULL,
    expires_at TIMESTAMP WITH TIME ZONE NOT NULL
);
