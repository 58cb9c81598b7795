package dev.lease.fence.jpa;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.lease.LeaseConfigurationException;
import dev.lease.sql.IdleBound;
import dev.lease.sql.SqlDialect;

/**
 * The bound on how long a transaction that locked a fenced entity's row (or a tombstone) may sit idle before the
 * database ends its session: lease-jdbc's {@link IdleBound}, applied on the connection Hibernate runs the locking
 * statement on, just before it. Why: a holder stopped inside its fenced transaction keeps its connection, so the
 * database never ends that transaction, and the row lock blocks every successor's write and fence at grant of that
 * entity for as long as it stays stopped. Only in a Spring-managed transaction ({@code JpaTransactionManager}), where
 * the bound can be set back when it ends; elsewhere nothing.
 */
record IdleTimeout(SqlDialect dialect, Duration bound) {

    /** The default bound, as {@code JdbcFence}'s. */
    static final Duration DEFAULT = Duration.ofSeconds(60);

    /** Spring's transactions and JDBC support, which {@link IdleBound} relies on, are optional here. */
    private static final boolean AVAILABLE = FlushBeforeCommit.AVAILABLE
            && FlushBeforeCommit.isPresent("org.springframework.jdbc.datasource.DataSourceUtils");

    private static final Pattern SIMPLE = Pattern.compile("(\\d+)\\s*(ms|s|m|h)?");

    /** Bounds the transaction {@code connection} runs, once per transaction; nothing when off or outside Spring's. */
    void apply(Connection connection) throws SQLException {
        if (AVAILABLE && !bound.isZero()) {
            IdleBound.apply(connection, dialect, bound);
        }
    }

    /**
     * The bound the session factory setting {@code value} of {@link FenceColumnIntegrator#IDLE_TIMEOUT_PROPERTY} asks
     * for: a {@link Duration}, a number of seconds, or a text such as {@code 60s}, {@code 500ms} or {@code PT1M};
     * {@link #DEFAULT} when absent.
     */
    static IdleTimeout of(SqlDialect dialect, Object value) {
        Duration bound = value == null ? DEFAULT : parse(value);
        if (bound.isNegative()) {
            throw invalid(value);
        }
        return new IdleTimeout(dialect, bound);
    }

    private static Duration parse(Object value) {
        if (value instanceof Duration duration) {
            return duration;
        }
        if (value instanceof Number seconds) {
            return Duration.ofSeconds(seconds.longValue());
        }
        String text = value.toString().trim().toLowerCase(Locale.ROOT);
        Matcher simple = SIMPLE.matcher(text);
        if (simple.matches()) {
            long amount = Long.parseLong(simple.group(1));
            String unit = simple.group(2) == null ? "s" : simple.group(2);
            return switch (unit) {
                case "ms" -> Duration.ofMillis(amount);
                case "m" -> Duration.ofMinutes(amount);
                case "h" -> Duration.ofHours(amount);
                default -> Duration.ofSeconds(amount);
            };
        }
        try {
            return Duration.parse(text.toUpperCase(Locale.ROOT));
        }
        catch (RuntimeException ex) {
            throw invalid(value);
        }
    }

    private static LeaseConfigurationException invalid(Object value) {
        return new LeaseConfigurationException("The Hibernate setting " + FenceColumnIntegrator.IDLE_TIMEOUT_PROPERTY
                + " is '" + value + "': not a duration a fenced transaction may sit idle.", "set it (or "
                + "lease.fence.idle-timeout with the Spring Boot starter) to a positive duration such as 60s, or 0 to "
                + "leave fenced transactions to the database's own idle settings");
    }
}
