-- One row per lease name, never deleted: the token column is the fencing counter. MySQL and MariaDB.
-- TIMESTAMP (not DATETIME) is stored in UTC, so sessions with different time zones agree; the explicit DEFAULT
-- keeps MySQL from adding ON UPDATE CURRENT_TIMESTAMP to it.
CREATE TABLE IF NOT EXISTS ${table} (
    name       VARCHAR(255) NOT NULL PRIMARY KEY,
    owner      VARCHAR(64)  NULL,
    token      BIGINT       NOT NULL,
    expires_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
) ENGINE = InnoDB;
