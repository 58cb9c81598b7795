package dev.lease.fence.kafka;

/**
 * Called between the steps that take a producer over at a new grant; for tests that force an interleaving (a holder
 * paused between the grant and the initialisation, or between the initialisation and the confirmation) and for the
 * fault suite's mutant, which skips the initialisation at grant to show what it prevents.
 */
interface GrantSteps {

    /** The default: nothing between the steps, and a new initialisation at every grant. */
    GrantSteps NONE = new GrantSteps() {
    };

    /** A new grant of the lease was seen, before its producer is initialised again. */
    default void beforeInitialisation(String transactionalId) {
    }

    /** The producer was initialised (the epoch bumped), before the grant is confirmed by the store. */
    default void beforeConfirmation(String transactionalId) {
    }

    /** Whether a new grant initialises the producer again; false only in the fault suite's mutant. */
    default boolean initialiseAtGrant() {
        return true;
    }
}
