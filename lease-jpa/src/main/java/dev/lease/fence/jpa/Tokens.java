package dev.lease.fence.jpa;

import dev.lease.FencingToken;
import dev.lease.Lease;
import dev.lease.LeaseContext;

/** The token a fenced write carries: the innermost lease's of the writing thread. */
final class Tokens {

    /** The innermost lease (null outside a leased section) and its token (null when it has none). */
    record Found(Lease lease, FencingToken token) {
    }

    private Tokens() {
    }

    static Found find() {
        Lease lease;
        try {
            lease = LeaseContext.current();
        }
        catch (IllegalStateException outside) {
            return new Found(null, null);
        }
        try {
            return new Found(lease, lease.token());
        }
        catch (IllegalStateException noTokens) {
            return new Found(lease, null);
        }
    }

    static IllegalStateException missing(Found found, FencedRow row, String property, Object id, String write) {
        String why = found.lease() == null
                ? "thread '" + Thread.currentThread().getName() + "' is not in a leased section"
                : "the innermost lease '" + found.lease().name() + "' (" + found.lease().kind() + ") has no fencing "
                        + "token: its backend issues none";
        return new IllegalStateException("Refused to " + write + " " + row.resource(id == null ? "(new)" : id)
                + " without a fencing token: entity " + row.entity + " has a @FenceColumn (" + property + "), so each "
                + "of its writes must carry a lease's token, and " + why + ". Either write it inside a leased section "
                + "on a fenced backend (a @Leased(kind = CORRECTNESS) method or LeaseTemplate.execute), or, for an admin"
                + " fix or a migration that needs no lease, inside UnfencedWrites.run(\"<reason>\", () -> ...), flushed"
                + " before it returns.");
    }
}
