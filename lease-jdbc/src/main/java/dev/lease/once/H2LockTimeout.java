package dev.lease.once;

import java.util.Optional;
import java.util.function.Supplier;

import org.h2.engine.SessionLocal;
import org.h2.jdbc.JdbcConnection;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcOperations;

/**
 * The lock timeout of an embedded H2 session, set and set back on the session object rather than by statements: H2
 * has no per-statement bound, and two statements around each key's insert tripled the cost of a {@code @Once}
 * transaction. Loaded only for H2 connections, whose driver is then on the class path.
 */
final class H2LockTimeout {

    private H2LockTimeout() {
    }

    /**
     * Runs {@code work} with the lock waits of the caller's H2 session bounded by {@code millis}, then sets the
     * session's lock timeout back; empty when the connection is not an embedded H2 session (a TCP connection to an H2
     * server), for the caller to bound it otherwise.
     */
    static <T> Optional<T> bounded(JdbcOperations jdbc, int millis, Supplier<T> work) {
        SessionLocal session = jdbc.execute((ConnectionCallback<SessionLocal>) connection -> {
            if (!connection.isWrapperFor(JdbcConnection.class)) {
                return null;
            }
            return connection.unwrap(JdbcConnection.class).getSession() instanceof SessionLocal local ? local : null;
        });
        if (session == null) {
            return Optional.empty();
        }
        int before = session.getLockTimeout();
        session.setLockTimeout(millis);
        try {
            return Optional.ofNullable(work.get());
        }
        finally {
            session.setLockTimeout(before);
        }
    }
}
