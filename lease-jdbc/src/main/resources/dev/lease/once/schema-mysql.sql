-- The keys of @Once work that committed, each recorded in the work's own transaction; kept for lease.once.retention.
-- MySQL and MariaDB; InnoDB for the key locks that make a second run wait for the first. Keys compare byte for byte
-- (utf8mb4_bin), as on PostgreSQL: a case-insensitive collation would make 'Report-A' and 'report-a' one key.
CREATE TABLE IF NOT EXISTS lease_once (
    once_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,
    done_at  DATETIME(6)  NOT NULL,
    token    BIGINT       NULL
) ENGINE = InnoDB;
