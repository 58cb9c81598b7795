package dev.lease.fence.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;

import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.fence.StaleTokenException;
import dev.lease.testing.TestTiming;

/** A paused holder A ({@link PausedHolderTest#staleSide}) against its successor B ({@link PausedHolderTest#nextSide}). */
class FencedKafkaTemplateTest extends PausedHolderTest {

    private static final String NAME = "outbox-relay:eu.1";
    private static final LeaseSpec RELAY = LeaseSpec.of(NAME, LeaseKind.CORRECTNESS).withTtl(Duration.ofSeconds(60));

    private final DefaultKafkaProducerFactory<String, String> factory = KafkaFixture.producerFactory(broker);
    private final FencedKafkaTemplate<String, String> templateA = new FencedKafkaTemplate<>(factory);
    private final FencedKafkaTemplate<String, String> templateB = new FencedKafkaTemplate<>(factory);

    @AfterEach
    void closeTemplates() {
        templateA.close();
        templateB.close();
    }

    @Test
    void aStaleHoldersOpenTransactionIsAbortedByTheSuccessorsGrantAndItsCommitRefused() throws Exception {
        CompletableFuture<Throwable> a = inStaleHolder(RELAY, () -> templateA.executeInTransaction(sender -> {
            sender.send(topic, "k", "a-1");
            pause();
            sender.send(topic, "k", "a-2");
            return null;
        }));
        awaitPaused();
        successorSends("b-1");
        resume();

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
        CompletableFuture<Throwable> a = inStaleHolder(RELAY, () -> templateA.send(topic, "k", "a-1"));
        awaitPaused();
        successorSends("b-1");
        resume();

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
        CompletableFuture<Throwable> a = inStaleHolder(RELAY, () -> templateA.send(topic, "k", "a-1"));
        awaitPaused();
        successorSends("b-1");
        resume();

        assertThat(assertStale(a.get(30, TimeUnit.SECONDS))).hasMessageContaining("no longer holds its grant");
        successorSends("b-2");
        assertThat(KafkaFixture.committedUpTo(broker, topic, "b-2")).containsExactly("b-1", "b-2");
    }

    @Test
    void aHolderSendsUnderOneProducerForAllTheTransactionsOfItsGrant() {
        nextSide.execute(RELAY, lease -> {
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
        nextSide.execute(RELAY.withWaitFor(TestTiming.seconds(10)), lease -> templateB.send(topic, "k", value));
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
