-- The highest fencing token each resource has accepted; rows are created on first use and never deleted.
CREATE TABLE IF NOT EXISTS lease_fence (
    resource VARCHAR(255) NOT NULL PRIMARY KEY,
    fence    BIGINT       NOT NULL
);
