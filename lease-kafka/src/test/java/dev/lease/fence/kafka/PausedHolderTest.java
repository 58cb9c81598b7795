package dev.lease.fence.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

import dev.lease.LeaseSpec;
import dev.lease.core.LeaseEngine;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.testing.TestTiming;

/**
 * A stale holder against the next one, on a real broker (one per test class). The stale side's engine is never told
 * that the store took its grant away (a paused process hears nothing); a test takes it away
 * ({@link InMemoryLeaseBackend#revoke}) while the stale side is held at one step ({@link #pause()}), grants the name to
 * the next side, and lets the stale side go on. Leases are long (no renewal runs during a test), so the stale side
 * learns of its loss only from the broker or from the confirmation.
 */
abstract class PausedHolderTest {

    static EmbeddedKafkaKraftBroker broker;

    final InMemoryLeaseBackend store = new InMemoryLeaseBackend();
    final LeaseEngine staleSide = KafkaFixture.engineOver(KafkaFixture.unaware(store));
    final LeaseEngine nextSide = KafkaFixture.engineOver(store);
    final String topic = KafkaFixture.newTopic(broker);
    private final ExecutorService staleThread = Executors.newSingleThreadExecutor();
    private final CountDownLatch paused = new CountDownLatch(1);
    private final CountDownLatch resume = new CountDownLatch(1);

    @BeforeAll
    static void startBroker() {
        broker = KafkaFixture.startBroker();
    }

    @AfterAll
    static void stopBroker() {
        broker.destroy();
    }

    @AfterEach
    void closeHolders() {
        resume.countDown();
        staleThread.shutdownNow();
        staleSide.close();
        nextSide.close();
    }

    /** Runs {@code work} in a section of the stale side; the future holds what the template threw to it, or null. */
    CompletableFuture<Throwable> inStaleHolder(LeaseSpec spec, Runnable work) {
        return CompletableFuture.supplyAsync(() -> {
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            try {
                staleSide.execute(spec, lease -> {
                    try {
                        work.run();
                    }
                    catch (RuntimeException ex) {
                        thrown.set(ex);
                    }
                    return null;
                });
            }
            catch (RuntimeException ex) {
                thrown.compareAndSet(null, ex); // the engine's own, when the template threw nothing
            }
            return thrown.get();
        }, staleThread);
    }

    /** Called by the stale side: holds it here until {@link #resume()}. */
    void pause() {
        paused.countDown();
        try {
            assertThat(resume.await(30, TimeUnit.SECONDS)).isTrue();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while paused", ex);
        }
    }

    void awaitPaused() throws InterruptedException {
        assertThat(paused.await(TestTiming.seconds(30).toSeconds(), TimeUnit.SECONDS)).isTrue();
    }

    void resume() {
        resume.countDown();
    }
}
