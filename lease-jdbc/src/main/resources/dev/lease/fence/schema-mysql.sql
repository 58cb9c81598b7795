-- The highest fencing token each resource has accepted; rows are created on first use and never deleted.
-- MySQL and MariaDB; InnoDB for the row locks that serialise writers. Resources compare byte for byte (utf8mb4_bin),
-- as on PostgreSQL: a case-insensitive default collation would make 'Invoice-7' and 'invoice-7' share one fence.
CREATE TABLE IF NOT EXISTS lease_fence (
    resource VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,
    fence    BIGINT       NOT NULL
) ENGINE = InnoDB;
