-- One row per lease name. With lease.jdbc.token: per-name (the default) the token column is each name's fencing
-- counter and rows are never deleted. With lease.jdbc.token: shared, the row named '' (an empty name, which no lease
-- can have) is the counter every grant draws its token from, and lease.jdbc.delete-idle-after may delete idle rows.
-- With lease.jdbc.delete-idle-after the backend also creates an index on expires_at (index-<platform>.sql).
-- MySQL and MariaDB.
-- expires_at is a DATETIME in UTC, written and compared with UTC_TIMESTAMP(6) only: a TIMESTAMP column converts
-- through the session time zone, and around a daylight saving change a local time is skipped (the write fails) or
-- repeated (the lease is stored an hour off). Names compare byte for byte (utf8mb4_bin), as on PostgreSQL and
-- ZooKeeper: a case-insensitive default collation would make 'CaseJob' and 'casejob' one lease.
CREATE TABLE IF NOT EXISTS ${table} (
    name       VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,
    owner      VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
    token      BIGINT       NOT NULL,
    expires_at DATETIME(6)  NOT NULL
) ENGINE = InnoDB;
