package dev.lease.fence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import dev.lease.FencingToken;
import dev.lease.LeaseConfigurationException;
import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseEngine;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.spi.ForwardingLeaseBackend;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantFence;
import dev.lease.spi.LeaseBackend;

/** Fence at grant in the engine: when the fence is advanced, with which token, and what a refusal does to the lease. */
class LeaseEngineFenceAtGrantTest {

    private static final LeaseSpec INVOICE = LeaseSpec.of("invoice-42", LeaseKind.CORRECTNESS);

    private final InMemoryLeaseBackend backend = new InMemoryLeaseBackend();
    private final AtomicReference<Thread> releasedOn = new AtomicReference<>();
    /** The in-memory store, telling which thread released: a release left to the background may come after a retry. */
    private final LeaseBackend<?> store = new ReleaseRecording<>(backend, releasedOn);
    private final List<String> events = new CopyOnWriteArrayList<>();
    private LeaseEngine engine;

    @AfterEach
    void stop() {
        if (engine != null) {
            engine.close();
        }
    }

    @Test
    void theFenceIsAdvancedToTheLeasesTokenBeforeTheWorkRuns() {
        engine = engineOver(store, (resource, token) -> events.add("fence " + resource + " " + token));
        FencingToken token = engine.execute(INVOICE.withFence("invoice-42/fence"), lease -> {
            events.add("work " + lease.token());
            return lease.token();
        });
        assertThat(token.value()).isEqualTo(backend.lastToken("invoice-42").orElseThrow());
        assertThat(events).containsExactly("fence invoice-42/fence " + token, "work " + token);
    }

    /** There is no work to run before, but the holder must not get a lease whose fence still lets older tokens in. */
    @Test
    void aProgrammaticAcquireAdvancesTheFenceBeforeReturningTheLease() {
        engine = engineOver(store, (resource, token) -> events.add("fence " + resource + " " + token));
        try (Lease lease = engine.acquire(INVOICE.withFence("invoice-42"))) {
            assertThat(events).containsExactly("fence invoice-42 " + lease.token());
        }
    }

    @Test
    void aLeaseWithoutFenceLeavesTheFenceAlone() {
        engine = engineOver(store, (resource, token) -> events.add("fence " + resource + " " + token));
        engine.execute(INVOICE, lease -> events.add("work"));
        assertThat(events).containsExactly("work");
    }

    @Test
    void aFenceThatAlreadyAcceptedANewerTokenKeepsTheWorkFromRunningAndReleasesTheLease() {
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:engine-fence-at-grant-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1");
        JdbcTemplate jdbc = new JdbcTemplate(h2);
        try {
            JdbcFence fence = new JdbcFence(jdbc);
            fence.createSchema();
            // Newer than any token the backend will issue (they are seeded from the wall clock).
            long newer = Long.MAX_VALUE;
            new TransactionTemplate(new DataSourceTransactionManager(h2)).executeWithoutResult(
                    status -> fence.advance("invoice-42", new FencingToken("invoice-42", newer)));
            engine = engineOver(store, fence);

            assertRefusedWithoutRunning(StaleTokenException.class, stale -> {
                assertThat(stale.current()).isEqualTo(newer);
                assertThat(stale.presented().value()).isEqualTo(backend.lastToken("invoice-42").orElseThrow());
            });
            assertThat(fence.current("invoice-42")).hasValue(newer);
        }
        finally {
            jdbc.execute("SHUTDOWN");
        }
    }

    /** A fence that cannot be reached cannot vouch for the lease either. */
    @Test
    void aFenceThatFailsKeepsTheWorkFromRunningAndReleasesTheLease() {
        engine = engineOver(store, (resource, token) -> {
            throw new IllegalStateException("database unreachable");
        });
        assertRefusedWithoutRunning(IllegalStateException.class,
                failure -> assertThat(failure).hasMessage("database unreachable"));
    }

    private <T extends Throwable> void assertRefusedWithoutRunning(Class<T> cause,
            Consumer<T> causeCheck) {
        AtomicBoolean ran = new AtomicBoolean();
        assertThatThrownBy(() -> engine.execute(INVOICE.withFence("invoice-42"), lease -> ran.getAndSet(true)))
                .isInstanceOf(LeaseLostException.class).hasMessageContaining("invoice-42")
                .cause().isInstanceOfSatisfying(cause, causeCheck);
        assertThat(ran).as("work ran").isFalse();
        assertThat(Thread.currentThread().isInterrupted()).as("caller left interrupted").isFalse();
        assertThat(releasedOn).as("released before the caller was told").hasValue(Thread.currentThread());
        Optional<Lease> next = engine.tryAcquire(INVOICE);
        assertThat(next).as("the refused lease was released at once").isPresent();
        next.get().close();
    }

    @Test
    void fenceAtGrantIsForCorrectnessLeasesOnly() {
        assertThatThrownBy(() -> LeaseSpec.of("report", LeaseKind.EFFICIENCY).withFence("report"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("report")
                .hasMessageContaining("CORRECTNESS");
        assertThatThrownBy(() -> INVOICE.withFence(" ")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("blank");
    }

    @Test
    void fenceAtGrantWithoutAFenceIsAConfigurationError() {
        engine = engineOver(store);
        AtomicBoolean ran = new AtomicBoolean();
        assertThatThrownBy(() -> engine.execute(INVOICE.withFence("invoice-42"), lease -> ran.getAndSet(true)))
                .isInstanceOf(LeaseConfigurationException.class).hasMessageContaining("invoice-42")
                .hasMessageContaining("no JdbcFence bean");
        assertThat(ran).isFalse();
        assertThat(backend.lastToken("invoice-42")).as("nothing granted").isEmpty();
    }

    /** Tells which thread released: a release left to the background may come after a retry. */
    private static final class ReleaseRecording<G extends Grant> extends ForwardingLeaseBackend<G> {

        private final AtomicReference<Thread> releasedOn;

        ReleaseRecording(LeaseBackend<G> backend, AtomicReference<Thread> releasedOn) {
            super(backend);
            this.releasedOn = releasedOn;
        }

        @Override
        public void release(G grant) throws Exception {
            releasedOn.set(Thread.currentThread());
            super.release(grant);
        }
    }

    private static LeaseEngine engineOver(LeaseBackend<?> backend) {
        return engineOver(backend, null);
    }

    private static LeaseEngine engineOver(LeaseBackend<?> backend, GrantFence grantFence) {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, backend);
        routes.put(LeaseKind.EFFICIENCY, backend);
        return LeaseEngine.builder(BackendRouter.of(routes)).grantFence(grantFence).build();
    }
}
