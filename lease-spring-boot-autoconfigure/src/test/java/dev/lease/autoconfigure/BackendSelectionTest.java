package dev.lease.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.junit.jupiter.api.Test;

import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.spi.Grant;
import dev.lease.spi.LeaseBackend;

class BackendSelectionTest {

    private final InMemoryLeaseBackend memory = new InMemoryLeaseBackend();
    private final LeaseBackend<Grant> unfenced = new UnfencedBackend();

    @Test
    void theOnlyAvailableBackendServesBothKinds() {
        var router = BackendSelection.select(List.of(memory), null, null, null);
        assertThat(router.backendFor(LeaseKind.CORRECTNESS)).isSameAs(memory);
        assertThat(router.backendFor(LeaseKind.EFFICIENCY)).isSameAs(memory);
    }

    @Test
    void noBackendAtAllIsAConfigurationError() {
        assertThatThrownBy(() -> BackendSelection.select(List.of(), null, null, null))
                .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("No lease backend is available")
                .hasMessageContaining("lease.zookeeper.connect-string");
    }

    @Test
    void severalBackendsNeedAChoice() {
        assertThatThrownBy(() -> BackendSelection.select(List.of(memory, unfenced), null, null, null))
                .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("in-memory, unfenced")
                .hasMessageContaining("set lease.backend");
    }

    @Test
    void unknownAndUnavailableBackendsAreNamed() {
        assertThatThrownBy(() -> BackendSelection.select(List.of(memory), "zookeper", null, null))
                .isInstanceOf(LeaseConfigurationException.class)
                .hasMessageContaining("lease.backend=zookeper names no lease backend")
                .hasMessageContaining("[zookeeper, redis, redlock, jdbc, kubernetes, etcd, in-memory]");
        assertThatThrownBy(() -> BackendSelection.select(List.of(memory), "redis", null, null))
                .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("not available")
                .hasMessageContaining("spring-boot-starter-data-redis");
    }

    @Test
    void correctnessRoutedExplicitlyToABackendWithoutTokensIsRefusedNamingTheProperty() {
        assertThatThrownBy(() -> BackendSelection.select(List.of(memory, unfenced), null, "unfenced", "in-memory"))
                .isInstanceOf(LeaseConfigurationException.class)
                .hasMessageContaining("lease.correctness-backend=unfenced")
                .hasMessageContaining("issues no fencing tokens")
                .hasMessageContaining("lease.correctness-backend: zookeeper");
    }

    @Test
    void kindsCanBeRoutedToDifferentBackends() {
        var router = BackendSelection.select(List.of(memory, unfenced), null, "in-memory", "unfenced");
        assertThat(router.backendFor(LeaseKind.CORRECTNESS)).isSameAs(memory);
        assertThat(router.backendFor(LeaseKind.EFFICIENCY)).isSameAs(unfenced);
    }
}
