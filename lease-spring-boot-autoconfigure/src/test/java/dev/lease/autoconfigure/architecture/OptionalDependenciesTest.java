package dev.lease.autoconfigure.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import dev.lease.testing.OptionalDependencyScan;

/**
 * No class of the library touches an optional dependency on a path Spring takes without checking it is there: the
 * bytecode of every {@code dev.lease} class on this module's test class path (the auto-configuration, the backends,
 * lease-spring, lease-jdbc, lease-jpa, lease-core), followed from the auto-configurations. An application lacking the
 * dependency would fail to start with {@code NoClassDefFoundError} (see {@link OptionalDependencyScan}); lease-web's
 * classes are checked by lease-web's own test.
 */
class OptionalDependenciesTest {

    /** Classes used only after a run-time check that the artifact is there. */
    static final Map<String, String> RUNTIME_GUARDS = Map.of(
            "dev.lease.aop.NonBlockingThreads$Netty", "io.netty:netty-common",
            "dev.lease.aop.NonBlockingThreads$Reactor", "io.projectreactor:reactor-core",
            // Touches the MDC only after checking that org.slf4j.MDC is there (LogContext.PRESENT).
            "dev.lease.core.LogContext", "org.slf4j:slf4j-api",
            // Made only for a method returning a reactive type: its library is there.
            "dev.lease.aop.ReactiveLeasedCalls", "io.projectreactor:reactor-core",
            // Called by JdbcFenceTableCheck only after checking that JPA is there (FencedEntityNames.PRESENT).
            "dev.lease.autoconfigure.FencedEntityNames", "jakarta.persistence:jakarta.persistence-api",
            // Called by JdbcOnceStore only when the database is H2 (SqlDialect.H2): its driver is there.
            "dev.lease.once.H2LockTimeout", "com.h2database:h2");

    /**
     * What the scan found when it was introduced and nobody has judged yet: each is either guarded in a way the scan
     * cannot see (then it moves to {@link #RUNTIME_GUARDS}, saying how) or a real failure to start for an application
     * lacking the artifact (then it is fixed and removed). New findings fail the test; so does an entry that is no
     * longer found, so the list only shrinks.
     */
    static final Map<String, Set<String>> TO_REVIEW = Map.ofEntries(
            Map.entry("dev.lease.autoconfigure.HikariPools",
                    Set.of("com.zaxxer:HikariCP", "org.springframework.boot:spring-boot-jdbc")),
            Map.entry("dev.lease.autoconfigure.JdbcSchemaInitialization",
                    Set.of("org.springframework.boot:spring-boot-jdbc")),
            Map.entry("dev.lease.autoconfigure.RedisLeaseConfiguration$ConnectionDetails",
                    Set.of("org.springframework.boot:spring-boot-data-redis")),
            // Reached from R2dbcFence, in an R2DBC application that may lack spring-jdbc.
            Map.entry("dev.lease.fence.JdbcFence", Set.of("org.springframework:spring-jdbc")),
            Map.entry("dev.lease.fence.FenceAtGrant", Set.of("org.springframework:spring-jdbc")),
            Map.entry("dev.lease.fence.FencedTable", Set.of("org.springframework:spring-jdbc")),
            Map.entry("dev.lease.fence.OwnTransaction", Set.of("org.springframework:spring-jdbc")),
            Map.entry("dev.lease.sql.LockWaits", Set.of("org.springframework:spring-jdbc")),
            Map.entry("dev.lease.sql.IdleBound", Set.of("org.springframework:spring-jdbc")),
            Map.entry("dev.lease.jdbc.PgReleaseListener", Set.of("org.postgresql:postgresql")),
            Map.entry("dev.lease.redis.LettuceCalls", Set.of("io.lettuce:lettuce-core")));

    @Test
    void noClassTouchesAnOptionalDependencyUnguarded() {
        List<OptionalDependencyScan.Violation> found = OptionalDependencyScan.violations(RUNTIME_GUARDS);
        assertThat(found).filteredOn(v -> !TO_REVIEW.getOrDefault(v.type(), Set.of()).contains(v.artifact()))
                .isEmpty();
        Set<String> foundPairs = found.stream().map(v -> v.type() + " " + v.artifact()).collect(Collectors.toSet());
        Set<String> listed = TO_REVIEW.entrySet().stream().flatMap(e -> e.getValue().stream()
                .map(a -> e.getKey() + " " + a)).collect(Collectors.toSet());
        assertThat(foundPairs).as("entries of TO_REVIEW no longer found: remove them").containsAll(listed);
    }
}
