package dev.lease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.memory.InMemoryLeaseBackend;

class BackendRouterTest {

    private final InMemoryLeaseBackend memory = new InMemoryLeaseBackend();
    private final ScriptedBackend unfenced = unfenced();

    private static ScriptedBackend unfenced() {
        ScriptedBackend b = new ScriptedBackend();
        b.fenced = false;
        return b;
    }

    @Test
    void oneBackendCanServeBothKinds() {
        BackendRouter router = BackendRouter.of(Map.of(LeaseKind.CORRECTNESS, memory, LeaseKind.EFFICIENCY, memory));
        assertThat(router.backendFor(LeaseKind.CORRECTNESS)).isSameAs(memory);
        assertThat(router.backendFor(LeaseKind.EFFICIENCY)).isSameAs(memory);
        assertThat(router.describe()).contains("CORRECTNESS -> in-memory (fencing tokens)");
    }

    @Test
    void correctnessIsNeverServedByABackendWithoutTokens() {
        BackendRouter implicit = BackendRouter.of(Map.of(LeaseKind.CORRECTNESS, unfenced, LeaseKind.EFFICIENCY, unfenced));
        assertThat(implicit.backendFor(LeaseKind.EFFICIENCY)).isSameAs(unfenced);
        assertThatThrownBy(() -> implicit.backendFor(LeaseKind.CORRECTNESS))
                .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("issues no fencing tokens")
                .hasMessageContaining("lease.correctness-backend: zookeeper");
    }

    @Test
    void kindsCanBeRoutedToDifferentBackends() {
        BackendRouter router = BackendRouter.of(Map.of(LeaseKind.CORRECTNESS, memory, LeaseKind.EFFICIENCY, unfenced));
        assertThat(router.backendFor(LeaseKind.CORRECTNESS)).isSameAs(memory);
        assertThat(router.backendFor(LeaseKind.EFFICIENCY)).isSameAs(unfenced);
    }

    @Test
    void renewingAtHalfTheTtlOrSlowerIsAConfigurationError() {
        assertThatThrownBy(() -> new LeaseDefaults(Duration.ofSeconds(30), Duration.ofSeconds(15)))
                .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("not less than half the ttl");
        assertThatThrownBy(() -> Timing.resolve("lease 'x'", Duration.ofSeconds(3), null,
                new LeaseDefaults(Duration.ofSeconds(30), Duration.ofSeconds(10)), memory))
                .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("lease 'x' (renewEvery from lease.renew-every)");
        assertThat(Timing.resolve("x", Duration.ofSeconds(3), null, LeaseDefaults.standard(), memory).renewEvery())
                .isEqualTo(Duration.ofSeconds(1));
    }
}
