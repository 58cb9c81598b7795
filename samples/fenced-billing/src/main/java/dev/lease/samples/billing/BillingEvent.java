package dev.lease.samples.billing;

/**
 * Something an instance of the billing service did, published as an application event so that the demo can draw
 * its timeline.
 *
 * @param instance the instance ({@code billing.instance})
 * @param kind what happened
 * @param invoiceId the invoice concerned
 * @param token the fencing token involved, 0 when none
 * @param text a sentence for the timeline
 */
public record BillingEvent(String instance, Kind kind, long invoiceId, long token, String text) {

    /** What happened. */
    public enum Kind {
        /** Waiting for a lease someone else holds. */
        WAITS,
        /** Granted a lease. */
        HOLDS,
        /** Started work under the lease. */
        WORKS,
        /** A fault was injected. */
        FAULT,
        /** The lease was lost; the work was interrupted. */
        LOST,
        /** A fenced write was accepted. */
        ACCEPTED,
        /** A fenced write was refused because a later holder had written. */
        REJECTED,
        /** Nothing left to do. */
        SKIPPED,
        /** Anything else worth a line. */
        NOTE
    }
}
