package dev.lease.jdbc;

import java.sql.SQLException;

import org.springframework.dao.PermissionDeniedDataAccessException;

/**
 * Recognises a refusal for want of a privilege, so that a missing {@code GRANT} is said once at WARN instead of being
 * retried silently for ever: PostgreSQL's and H2's SQLSTATE {@code 42501} (insufficient privilege), MySQL's and
 * MariaDB's error 1142 (command denied on a table), H2's error 90096.
 */
final class MissingPrivilege {

    private MissingPrivilege() {
    }

    static boolean isCause(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause instanceof PermissionDeniedDataAccessException) {
                return true;
            }
            if (cause instanceof SQLException sql && ("42501".equals(sql.getSQLState()) || sql.getErrorCode() == 1142
                    || sql.getErrorCode() == 90096)) {
                return true;
            }
        }
        return false;
    }
}
