-- One row per lease name, never deleted: the token column is the fencing counter.
-- expires_at is compared with the database clock only; TIMESTAMP WITH TIME ZONE keeps sessions with different
-- time zones in agreement.
CREATE TABLE IF NOT EXISTS ${table} (
    name       VARCHAR(255)             NOT NULL PRIMARY KEY,
    owner      VARCHAR(64),
    token      BIGINT                   NOT NULL,
    expires_at TIMESTAMP WITH TIME ZONE NOT NULL
);
