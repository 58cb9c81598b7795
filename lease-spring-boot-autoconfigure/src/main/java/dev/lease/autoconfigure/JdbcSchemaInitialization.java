package dev.lease.autoconfigure;

import javax.sql.DataSource;

import org.springframework.boot.sql.init.DatabaseInitializationMode;
import org.springframework.util.ClassUtils;

/** Decides, like Spring Boot does for its own schemas, whether the starter creates a table in a DataSource. */
final class JdbcSchemaInitialization {

    private static final String EMBEDDED_DETECTOR = "org.springframework.boot.jdbc.EmbeddedDatabaseConnection";

    private JdbcSchemaInitialization() {
    }

    static boolean shouldCreate(DatabaseInitializationMode mode, DataSource dataSource) {
        return switch (mode) {
            case ALWAYS -> true;
            case NEVER -> false;
            case EMBEDDED -> isEmbedded(dataSource);
        };
    }

    private static boolean isEmbedded(DataSource dataSource) {
        // spring-boot-jdbc is optional: without it nothing counts as embedded, so nothing is created by default.
        return ClassUtils.isPresent(EMBEDDED_DETECTOR, JdbcSchemaInitialization.class.getClassLoader())
                && org.springframework.boot.jdbc.EmbeddedDatabaseConnection.isEmbedded(dataSource);
    }
}
