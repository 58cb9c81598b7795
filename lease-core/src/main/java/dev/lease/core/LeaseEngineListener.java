package dev.lease.core;

import java.util.OptionalLong;

/**
 * What an engine tells observers, such as the auto-configuration's Micrometer binding, about its leases: how each
 * acquire ended, how each campaign of an election ended, each renewal, each loss and its cause. Methods run on the acquiring thread or the engine's own
 * threads, must return quickly, and should not throw: what a listener throws is logged at DEBUG and ignored, since
 * observing leases must never change what they do.
 */
public interface LeaseEngineListener {

    /**
     * An acquire starts, on the calling thread. The returned acquisition is told once, on that thread, how it ended.
     *
     * @param lease the lease asked for
     * @return what to tell when the acquire ends
     */
    default Acquisition acquiring(LeaseDescription lease) {
        return Acquisition.IGNORED;
    }

    /**
     * An election starts campaigning, on its own thread: at its start, or at its next attempt after a term ended. The
     * campaign lasts until this instance wins a term or the election is closed; its attempts at the term's lease are
     * not acquires ({@link #acquiring} never hears of them), since a follower's attempts last as long as another
     * instance leads. A term, once won, is a held lease like any other: its renewals and loss are reported as theirs.
     *
     * @param election the election's lease
     * @return what to tell when the campaign ends
     */
    default Campaign campaigning(LeaseDescription election) {
        return Campaign.IGNORED;
    }

    /**
     * A renewal of a held lease ended.
     *
     * @param lease the lease
     * @param succeeded false when the store call failed, the store no longer held the grant, or the answer came after
     *        the lease's local validity ran out
     */
    default void renewed(LeaseDescription lease, boolean succeeded) {
    }

    /**
     * A held lease was declared lost; called at most once per grant, right after the threads running its sections
     * were interrupted (stopping the work comes first), on the thread that declared the loss.
     *
     * @param lease the lease
     * @param token its fencing token, empty on backends without one
     * @param cause why
     */
    default void lost(LeaseDescription lease, OptionalLong token, LossCause cause) {
    }

    /** One acquire in progress, told once how it ended. */
    interface Acquisition {

        /** An acquisition nobody observes. */
        Acquisition IGNORED = new Acquisition() {
            @Override
            public Runnable granted(OptionalLong token) {
                return () -> { };
            }

            @Override
            public void busy() {
            }

            @Override
            public void failed(Throwable error) {
            }
        };

        /**
         * The lease was granted (and fenced at grant, when asked).
         *
         * @param token its fencing token, empty on backends without one
         * @return what to run once, when the lease is closed: released by its holder, or lost and then released
         */
        Runnable granted(OptionalLong token);

        /** Someone else held the lease for as long as the caller was willing to wait. */
        void busy();

        /**
         * The acquire failed: the backend failed for the whole wait, the thread was interrupted, the application is
         * shutting down, or the fence refused the new token.
         *
         * @param error what the caller gets
         */
        void failed(Throwable error);
    }

    /** One campaign of an election in progress, told once, on the election's thread, how it ended. */
    interface Campaign {

        /** A campaign nobody observes. */
        Campaign IGNORED = new Campaign() {
            @Override
            public Runnable won(OptionalLong token) {
                return () -> { };
            }

            @Override
            public void stopped() {
            }
        };

        /**
         * This instance won: the term's lease was granted.
         *
         * @param token the term's fencing token, empty on backends without one
         * @return what to run once, when the term's lease is closed: the term ended
         */
        Runnable won(OptionalLong token);

        /** The election was closed, or its engine, before this instance won. */
        void stopped();
    }
}
