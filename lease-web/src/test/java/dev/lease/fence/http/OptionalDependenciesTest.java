package dev.lease.fence.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.lease.testing.OptionalDependencyScan;

/**
 * No class of the library touches an optional dependency on a path Spring takes without checking it is there: the
 * bytecode of every {@code dev.lease} class on this module's test class path (lease-web, the auto-configuration and
 * the modules below), followed from the auto-configurations (see {@link OptionalDependencyScan}).
 */
class OptionalDependenciesTest {

    /** Classes that check at run time that an artifact is present before they are used, and the artifact. */
    static final Map<String, String> RUNTIME_GUARDS = Map.of(
            // Used only when ClassUtils.isPresent found spring-tx (FencedRequestPostProcessor.TRANSACTIONS).
            "dev.lease.fence.http.FencedRequestPostProcessor$Transactions", "org.springframework:spring-tx");

    @Test
    void noClassTouchesAnOptionalDependencyUnguarded() {
        assertThat(OptionalDependencyScan.violations(RUNTIME_GUARDS)).isEmpty();
    }
}
