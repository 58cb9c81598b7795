package dev.lease.sql;

import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * The shipped DDL ({@code dev/lease/jdbc/*.sql} for the lease table, {@code dev/lease/fence/*.sql} for
 * {@code lease_fence}, {@code dev/lease/once/*.sql} for {@code lease_once}), read as class path resources by {@link SqlDialect}: a native image holds only the resources it
 * is told to (registered in {@code META-INF/spring/aot.factories}).
 */
class SqlScriptsRuntimeHints implements RuntimeHintsRegistrar {

    @Override
    public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
        hints.resources().registerPattern("dev/lease/jdbc/*.sql").registerPattern("dev/lease/fence/*.sql")
                .registerPattern("dev/lease/once/*.sql");
    }
}
