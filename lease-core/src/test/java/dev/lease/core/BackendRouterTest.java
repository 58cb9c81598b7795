package dev.lease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;

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
    void theOnlyAvailableBackendServesBothKinds() {
        BackendRouter router = BackendRouter.select(List.of(memory), null, null, null);
        assertThat(router.backendFor(LeaseKind.CORRECTNESS)).isSameAs(memory);
        assertThat(router.backendFor(LeaseKind.EFFICIENCY)).isSameAs(memory);
        assertThat(router.describe()).contains("CORRECTNESS -> in-memory (fencing tokens)");
    }

    @Test
    void noBackendAtAllIsAConfigurationError() {
        assertThatThrownBy(() -> BackendRouter.select(List.of(), null, null, null))
                .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("No lease backend is available")
                .hasMessageContaining("lease.zookeeper.connect-string");
    }

    @Test
    void severalBackendsNeedAChoice() {
        assertThatThrownBy(() -> BackendRouter.select(List.of(memory, unfenced), null, null, null))
                .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("in-memory, scripted")
                .hasMessageContaining("set lease.backend");
    }

    @Test
    void unknownAndUnavailableBackendsAreNamed() {
        assertThatThrownBy(() -> BackendRouter.select(List.of(memory), "zookeper", null, null))
                .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("lease.backend=zookeper names no lease backend")
                .hasMessageContaining("[zookeeper, redis, jdbc, in-memory]");
        assertThatThrownBy(() -> BackendRouter.select(List.of(memory), "redis", null, null))
                .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("not available")
                .hasMessageContaining("spring-boot-starter-data-redis");
    }

    @Test
    void correctnessIsNeverServedByABackendWithoutTokens() {
        assertThatThrownBy(() -> BackendRouter.select(List.of(memory, unfenced), null, "scripted", "in-memory"))
                .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("issues no fencing tokens")
                .hasMessageContaining("lease.correctness-backend: zookeeper");
        BackendRouter implicit = BackendRouter.select(List.of(unfenced), null, null, null);
        assertThat(implicit.backendFor(LeaseKind.EFFICIENCY)).isSameAs(unfenced);
        assertThatThrownBy(() -> implicit.backendFor(LeaseKind.CORRECTNESS))
                .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("fencing");
    }

    @Test
    void kindsCanBeRoutedToDifferentBackends() {
        BackendRouter router = BackendRouter.select(List.of(memory, unfenced), null, "in-memory", "scripted");
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
