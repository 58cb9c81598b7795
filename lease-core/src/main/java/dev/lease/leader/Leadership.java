package dev.lease.leader;

import java.util.Optional;

import dev.lease.FencingToken;
import dev.lease.LeaseKind;

/** One election as this instance takes part in it. */
public interface Leadership {

    /**
     * The election name.
     *
     * @return the election name
     */
    String election();

    /**
     * The kind of lease its terms are.
     *
     * @return the lease kind
     */
    LeaseKind kind();

    /**
     * Whether this instance leads now: its term's lease is held and locally valid. Like any lease check, the answer
     * can be out of date by the time the caller acts on it; fence writes with {@link #token()}.
     *
     * @return true while this instance leads
     */
    boolean isLeader();

    /**
     * The current term's fencing token, while this instance leads on a fenced backend.
     *
     * @return the token, or empty when not leader or when the backend issues none
     */
    Optional<FencingToken> token();

    /**
     * Gives up the current term, if this instance leads: work running under it is interrupted, the lease is
     * released so that another instance can take over at once, and this instance campaigns again after a pause.
     * For rolling deploys and manual handovers.
     */
    void yieldLeadership();
}
