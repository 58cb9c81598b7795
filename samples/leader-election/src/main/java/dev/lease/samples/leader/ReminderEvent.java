package dev.lease.samples.leader;

/**
 * Something an instance of the reminder service did, published as an application event so that the demo can print
 * its timeline.
 *
 * @param instance the instance ({@code reminders.instance})
 * @param kind what happened
 * @param batch the reminder batch concerned, 0 when none
 * @param token the fencing token involved, 0 when none
 * @param text a sentence for the timeline
 */
public record ReminderEvent(String instance, Kind kind, long batch, long token, String text) {

    /** What happened. */
    public enum Kind {
        /** A run of the leader-only job started preparing a batch. */
        PREPARES,
        /** The batch was written to the outbox: the table accepted the term's token. */
        WROTE,
        /** The table refused the write: a later term had written (StaleTokenException). */
        REFUSED,
        /** A run ended with LeaseLostException: its term ended while it ran. */
        LOST,
        /**
         * The relay sent a batch of outbox messages to Kafka in a transaction not committed yet: no consumer sees
         * them until it commits.
         */
        RELAYING,
        /** The relay's Kafka transaction committed, and its messages are marked sent. */
        RELAYED,
        /** The broker refused the relay's transaction: a later term took the producer over (StaleTokenException). */
        RELAY_REFUSED,
        /**
         * The relay's transaction committed, but the table refused marking its messages sent: a later term had
         * started (StaleTokenException). The next leader sends them again.
         */
        MARK_REFUSED,
        /** The outbox relay started (this instance leads). */
        RELAY_STARTED,
        /** The outbox relay stopped (this instance no longer leads). */
        RELAY_STOPPED
    }
}
