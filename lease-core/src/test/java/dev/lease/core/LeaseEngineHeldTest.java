package dev.lease.core;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.testing.BlockingWork;

/** {@link LeaseEngine#held()}: what the Actuator endpoint shows of the leases an engine holds. */
class LeaseEngineHeldTest {

    private final ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "held-test-worker"));
    private final InMemoryLeaseBackend memory = new InMemoryLeaseBackend();
    private LeaseEngine engine = LeaseEngineTest.engineOver(memory);

    @AfterEach
    void stop() {
        pool.shutdownNow();
        engine.close();
    }

    @Test
    void nothingHeldIsAnEmptyList() {
        assertThat(engine.held()).isEmpty();
    }

    @Test
    void aLeasedSectionShowsItsTokenTheRemainingTimeAndItsThread() throws Exception {
        BlockingWork work = new BlockingWork();
        AtomicReference<Lease> inside = new AtomicReference<>();
        Duration ttl = Duration.ofMinutes(5);
        Future<String> call = pool.submit(() -> engine.execute(LeaseSpec.of("invoice-42", LeaseKind.CORRECTNESS)
                .withTtl(ttl), lease -> {
                    inside.set(lease);
                    return work.doInLease(lease);
                }));
        assertThat(work.awaitStarted(seconds(10))).isTrue();

        List<HeldLeaseSnapshot> held = engine.held();

        assertThat(held).singleElement().satisfies(h -> {
            assertThat(h.name()).isEqualTo("invoice-42");
            assertThat(h.kind()).isEqualTo(LeaseKind.CORRECTNESS);
            assertThat(h.backend()).isEqualTo(InMemoryLeaseBackend.ID);
            assertThat(h.token()).hasValue(inside.get().token().value());
            assertThat(h.remaining()).isPositive().isLessThanOrEqualTo(ttl);
            assertThat(h.thread()).isEqualTo("held-test-worker");
        });
        call.cancel(true);
        await().atMost(seconds(10)).until(() -> engine.held().isEmpty());
    }

    @Test
    void aLeaseTakenWithoutASectionHasNoThreadAndGoesOnRelease() {
        Lease first = engine.acquire(LeaseSpec.of("b-report", LeaseKind.EFFICIENCY));
        Lease second = engine.acquire(LeaseSpec.of("a-cleanup", LeaseKind.EFFICIENCY));

        assertThat(engine.held()).as("sorted by name").extracting(HeldLeaseSnapshot::name)
                .containsExactly("a-cleanup", "b-report");
        assertThat(engine.held()).allSatisfy(h -> assertThat(h.thread()).isNull());

        first.close();
        assertThat(engine.held()).extracting(HeldLeaseSnapshot::name).containsExactly("a-cleanup");
        second.close();
        assertThat(engine.held()).isEmpty();
    }

    @Test
    void aBackendWithoutTokensShowsNoToken() {
        ScriptedBackend unfenced = new ScriptedBackend("unfenced");
        unfenced.fenced = false;
        engine.close();
        engine = new LeaseEngine(BackendRouter.of(Map.of(LeaseKind.EFFICIENCY, unfenced)),
                LeaseDefaults.standard());
        try (Lease lease = engine.acquire(LeaseSpec.of("no-token", LeaseKind.EFFICIENCY))) {
            assertThat(engine.held()).singleElement().satisfies(h -> {
                assertThat(h.backend()).isEqualTo("unfenced");
                assertThat(h.token()).isEmpty();
            });
        }
    }

    @Test
    void aLostLeaseIsNotHeldEvenBeforeItsHolderReturns() {
        ScriptedBackend scripted = new ScriptedBackend();
        engine.close();
        engine = LeaseEngineTest.engineOver(scripted);
        Lease lease = engine.acquire(LeaseSpec.of("session", LeaseKind.CORRECTNESS).withTtl(Duration.ofMinutes(5)));
        assertThat(engine.held()).hasSize(1);

        scripted.lastListener.get().leaseLost("session suspended");

        assertThat(lease.isValid()).isFalse();
        assertThat(engine.held()).isEmpty();
        lease.close();
    }
}
