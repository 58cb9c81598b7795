package dev.lease.fence.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.lease.testing.OptionalDependencyScan;

/**
 * No class of lease-web touches an optional dependency on a path Spring takes without checking it is there (the
 * bytecode of every {@code dev.lease} class on this test class path, followed from the auto-configurations, see
 * {@link OptionalDependencyScan}): the check that caught {@code FencedRequestPostProcessor} linking spring-tx in a
 * plain MVC service. The other modules' classes are checked by the auto-configuration module's test.
 */
class OptionalDependenciesTest {

    /** Classes used only after a run-time check that the artifact is there. */
    static final Map<String, String> RUNTIME_GUARDS = Map.of(
            // Used only when ClassUtils.isPresent found spring-tx (FencedRequestPostProcessor.TRANSACTIONS).
            "dev.lease.fence.http.FencedRequestPostProcessor$Transactions", "org.springframework:spring-tx",
            "dev.lease.aop.NonBlockingThreads$Netty", "io.netty:netty-common",
            "dev.lease.aop.NonBlockingThreads$Reactor", "io.projectreactor:reactor-core",
            "dev.lease.aop.ReactiveLeasedCalls", "io.projectreactor:reactor-core");

    @Test
    void noClassOfLeaseWebTouchesAnOptionalDependencyUnguarded() {
        assertThat(OptionalDependencyScan.violations(RUNTIME_GUARDS))
                .filteredOn(v -> v.type().startsWith(FencedRequest.class.getPackageName() + "."))
                .isEmpty();
    }
}
