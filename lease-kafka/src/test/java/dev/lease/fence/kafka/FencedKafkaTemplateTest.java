package dev.lease.fence.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.core.LeaseEngine;
import dev.lease.fence.StaleTokenException;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.testing.TestTiming;

/**
 * A paused holder against its successor on a real broker. Holder A's engine is never told that the store took its
 * grant away (a paused process hears nothing); the test takes it away ({@link InMemoryLeaseBackend#revoke}) while A is
 * held at one step, grants the name to B, and lets A go on. Leases are long (no renewal runs during a test), so A
 * learns of its loss only from the broker or from the confirmation.
 */
class FencedKafkaTemplateTest {

    private static final String NAME = "outbox-relay:eu.1";
    private static final LeaseSpec RELAY = LeaseSpec.of(NAME, LeaseKind.CORRECTNESS).withTtl(Duration.ofSeconds(60));

    private static EmbeddedKafkaKraftBroker broker;

    private final InMemoryLeaseBackend store = new InMemoryLeaseBackend();
    private final LeaseEngine engineA = KafkaFixture.engineOver(KafkaFixture.unaware(store));
    private final LeaseEngine engineB = KafkaFixture.engineOver(store);
    private final DefaultKafkaProducerFactory<String, String> factory = KafkaFixture.producerFactory(broker);
    private final FencedKafkaTemplate<String, String> templateA = new FencedKafkaTemplate<>(factory);
    private final FencedKafkaTemplate<String, String> templateB = new FencedKafkaTemplate<>(factory);
    private final ExecutorService holderThread = Executors.newSingleThreadExecutor();
    private final String topic = KafkaFixture.newTopic(broker);
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
    void close() {
        resume.countDown();
        holderThread.shutdownNow();
        templateA.close();
        templateB.close();
        engineA.close();
        engineB.close();
    }

    @Test
    void aStaleHoldersOpenTransactionIsAbortedByTheSuccessorsGrantAndItsCommitRefused() throws Exception {
        CompletableFuture<Throwable> a = inHolderA(() -> templateA.executeInTransaction(sender -> {
            sender.send(topic, "k", "a-1");
            pause();
            sender.send(topic, "k", "a-2");
            return null;
        }));
        awaitPaused();
        successorSends("b-1");
        resume.countDown();

        assertStaleAndRefusedByTheBroker(a.get(30, TimeUnit.SECONDS));
        successorSends("b-2");
        assertThat(KafkaFixture.committedUpTo(broker, topic, "b-2")).containsExactly("b-1", "b-2");
    }

    /**
     * Interleaving 1: A pauses after its grant, before initialising its producer. B takes the name over and sends. A
     * wakes and initialises (fencing B's producer), but the store no longer confirms A's grant: A sends nothing. B's
     * next transaction finds its producer fenced, confirms that it still holds the lease, takes the name over again and
     * sends, without losing or repeating a record.
     */
    @Test
    void aHolderPausedBetweenGrantAndInitialisationSendsNothingAndItsSuccessorRecovers() throws Exception {
        templateA.steps(pauseAt(true));
        CompletableFuture<Throwable> a = inHolderA(() -> templateA.send(topic, "k", "a-1"));
        awaitPaused();
        successorSends("b-1");
        resume.countDown();

        StaleTokenException refused = assertStale(a.get(30, TimeUnit.SECONDS));
        assertThat(refused).hasMessageContaining("no longer holds its grant");
        successorSends("b-2");
        successorSends("b-3");
        assertThat(KafkaFixture.committedUpTo(broker, topic, "b-3")).containsExactly("b-1", "b-2", "b-3");
    }

    /**
     * Interleaving 2: A pauses after initialising its producer, before the store confirms its grant. B's grant came
     * after A's initialisation, so B's initialisation fences A; A's confirmation fails and A sends nothing.
     */
    @Test
    void aHolderPausedBetweenInitialisationAndConfirmationSendsNothing() throws Exception {
        templateA.steps(pauseAt(false));
        CompletableFuture<Throwable> a = inHolderA(() -> templateA.send(topic, "k", "a-1"));
        awaitPaused();
        successorSends("b-1");
        resume.countDown();

        assertThat(assertStale(a.get(30, TimeUnit.SECONDS))).hasMessageContaining("no longer holds its grant");
        successorSends("b-2");
        assertThat(KafkaFixture.committedUpTo(broker, topic, "b-2")).containsExactly("b-1", "b-2");
    }

    @Test
    void aHolderSendsUnderOneProducerForAllTheTransactionsOfItsGrant() {
        engineB.execute(RELAY, lease -> {
            templateB.send(topic, "k", "b-1");
            templateB.executeInTransaction(sender -> {
                sender.send(topic, "k", "b-2");
                return sender.send(topic, "k", "b-3");
            });
            return null;
        });
        assertThat(KafkaFixture.committedUpTo(broker, topic, "b-3")).containsExactly("b-1", "b-2", "b-3");
    }

    private void successorSends(String value) {
        store.revoke(NAME); // frees the name at the store; A is not told
        engineB.execute(RELAY.withWaitFor(TestTiming.seconds(10)), lease -> templateB.send(topic, "k", value));
    }

    /** What the template threw to holder A inside its section (the engine may add its own loss around it). */
    private CompletableFuture<Throwable> inHolderA(Runnable work) {
        return CompletableFuture.supplyAsync(() -> {
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            try {
                engineA.execute(RELAY, lease -> {
                    try {
                        work.run();
                    }
                    catch (RuntimeException ex) {
                        thrown.set(ex);
                        throw ex;
                    }
                    return null;
                });
            }
            catch (RuntimeException ex) {
                thrown.compareAndSet(null, ex);
            }
            return thrown.get();
        }, holderThread);
    }

    private GrantSteps pauseAt(boolean beforeInitialisation) {
        return new GrantSteps() {
            @Override
            public void beforeInitialisation(String transactionalId) {
                if (beforeInitialisation) {
                    pause();
                }
            }

            @Override
            public void beforeConfirmation(String transactionalId) {
                if (!beforeInitialisation) {
                    pause();
                }
            }
        };
    }

    private void pause() {
        paused.countDown();
        try {
            assertThat(resume.await(30, TimeUnit.SECONDS)).isTrue();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while paused", ex);
        }
    }

    private void awaitPaused() throws InterruptedException {
        assertThat(paused.await(TestTiming.seconds(30).toSeconds(), TimeUnit.SECONDS)).isTrue();
    }

    private void assertStaleAndRefusedByTheBroker(Throwable thrown) {
        assertThat(assertStale(thrown)).hasMessageContaining("the broker fenced its producer");
    }

    /** The template threw StaleTokenException to holder A, naming its producer's transactional id. */
    private StaleTokenException assertStale(Throwable thrown) {
        assertThat(thrown).as("what holder A got").isInstanceOf(StaleTokenException.class);
        StaleTokenException stale = (StaleTokenException) thrown;
        assertThat(stale.resource()).isEqualTo(templateA.transactionalId(NAME)).isEqualTo("lease.outbox-relay%3Aeu%2E1");
        assertThat(stale.presented().lease()).isEqualTo(NAME);
        return stale;
    }
}
