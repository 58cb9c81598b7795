package dev.lease.fence.kafka;

/**
 * The fault suite's fence mutant for Kafka: a template that takes a new grant over without initialising its producer
 * again (it keeps the producer of the previous grant, epoch and open transaction included), through the test hook
 * {@link GrantSteps#initialiseAtGrant()}. The suite's Kafka scenarios must see the stale records it lets commit.
 */
public final class MutantGrantSteps {

    private MutantGrantSteps() {
    }

    /** Switches off the initialisation at grant of {@code template}, for every grant from now on. */
    public static void withoutInitialisationAtGrant(FencedKafkaTemplate<?, ?> template) {
        template.steps(new GrantSteps() {
            @Override
            public boolean initialiseAtGrant() {
                return false;
            }
        });
    }
}
