package dev.lease.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * What the JDBC lease backend and {@code dev.lease.fence.JdbcFence} share about databases: which supported platform
 * a DataSource is, and how to read the one-statement DDL scripts shipped for each. Internal: public only for the
 * fence package.
 */
public final class SqlPlatforms {

    private SqlPlatforms() {
    }

    /**
     * The platform of a JDBC {@code DatabaseMetaData.getDatabaseProductName()}: {@code postgresql}, {@code mysql}
     * (also MariaDB) or {@code h2}; empty for anything else.
     */
    public static Optional<String> of(String productName) {
        String p = productName == null ? "" : productName.toLowerCase(Locale.ROOT);
        if (p.contains("postgres")) {
            return Optional.of("postgresql");
        }
        if (p.contains("mysql") || p.contains("mariadb")) {
            return Optional.of("mysql");
        }
        return p.equals("h2") ? Optional.of("h2") : Optional.empty();
    }

    /** Reads a one-statement script from the classpath, dropping comment lines and the final semicolon. */
    public static String readStatement(String location) {
        try (InputStream in = SqlPlatforms.class.getClassLoader().getResourceAsStream(location)) {
            if (in == null) {
                throw new IllegalStateException("Missing schema script " + location);
            }
            String ddl = new String(in.readAllBytes(), StandardCharsets.UTF_8).lines()
                    .filter(line -> !line.strip().startsWith("--")).collect(Collectors.joining("\n")).strip();
            return ddl.endsWith(";") ? ddl.substring(0, ddl.length() - 1) : ddl;
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
