package dev.lease.fence.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.fence.StaleTokenException;
import dev.lease.testing.TestTiming;

/**
 * A handover inside one instance: a section whose lease the store took away is still inside its transaction (paused,
 * or deaf to the loss) when the next grant of the name in the same instance sends through the same template. The
 * real fence initialises a new producer at that grant, which aborts the stale transaction; the mutant that skips the
 * new initialisation (it reuses the producer of the previous grant) lets the stale records commit after the
 * successor's grant. The scenario must tell the two apart: a check that passes against the mutant would prove nothing.
 */
class KafkaFenceMutantDetectionTest extends PausedHolderTest {

    private static final String NAME = "exporter";
    private static final LeaseSpec EXPORT = LeaseSpec.of(NAME, LeaseKind.CORRECTNESS).withTtl(Duration.ofSeconds(60));

    private final FencedKafkaTemplate<String, String> template = new FencedKafkaTemplate<>(
            KafkaFixture.producerFactory(broker));

    @AfterEach
    void closeTemplate() {
        template.close();
    }

    @Test
    void theRealFenceAbortsTheStaleTransactionAtTheNextGrant() throws Exception {
        Throwable stale = handover();
        assertThat(stale).isInstanceOf(StaleTokenException.class);
        assertThat(KafkaFixture.committedUpTo(broker, topic, "next-2")).containsExactly("next-1", "next-2");
    }

    @Test
    void theMutantWithoutInitialisationAtGrantLetsTheStaleRecordsCommit() throws Exception {
        template.steps(new GrantSteps() {
            @Override
            public boolean initialiseAtGrant() {
                return false;
            }
        });
        assertThat(handover()).as("the stale section's commit").isNull();
        assertThat(KafkaFixture.committedUpTo(broker, topic, "next-2")).contains("stale-1");
    }

    /**
     * The stale section sends and pauses in its transaction; the store takes its grant away; the next grant sends
     * (under the mutant its send may fail: the reused producer is inside the stale transaction); the stale section
     * commits; the next grant sends again.
     *
     * @return what the stale section's call threw, null when its transaction committed
     */
    private Throwable handover() throws Exception {
        CompletableFuture<Throwable> stale = inStaleHolder(EXPORT, () -> template.executeInTransaction(sender -> {
            sender.send(topic, "k", "stale-1");
            pause();
            return null;
        }));
        awaitPaused();
        store.revoke(NAME);
        nextGrantSends("next-1");
        resume();
        Throwable thrown = stale.get(30, TimeUnit.SECONDS);
        nextGrantSends("next-2");
        return thrown;
    }

    private void nextGrantSends(String value) {
        try {
            nextSide.execute(EXPORT.withWaitFor(TestTiming.seconds(10)), lease -> template.send(topic, "k", value));
        }
        catch (RuntimeException ex) {
            if (!value.equals("next-1")) {
                throw ex;
            }
            // Only under the mutant: the reused producer is still inside the stale section's transaction.
        }
    }
}
