package dev.lease.fence.http;

import java.util.Optional;

import dev.lease.FencingToken;
import dev.lease.Lease;
import dev.lease.LeaseContext;

/** The token a request sent from this thread carries: that of the innermost lease bound to it, when it has one. */
final class CurrentToken {

    private CurrentToken() {
    }

    /**
     * Empty outside a leased section, and when the innermost lease's backend issues no tokens (an EFFICIENCY lease
     * on Redis): such a request goes without the header, and a fenced server refuses it with 428 rather than
     * accepting a write it cannot order.
     */
    static Optional<FencingToken> get() {
        Lease lease;
        try {
            lease = LeaseContext.current();
        }
        catch (IllegalStateException outside) {
            return Optional.empty();
        }
        return lease.hasToken() ? Optional.of(lease.token()) : Optional.empty();
    }
}
