package dev.lease.core;

import java.util.OptionalLong;

/**
 * What an engine tells observers, such as the auto-configuration's Micrometer binding, about its leases: how each
 * acquire ended, each renewal, each loss and its cause. Methods run on the acquiring thread or the engine's own
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
     * A renewal of a held lease ended.
     *
     * @param lease the lease
     * @param succeeded false when the store call failed, the store no longer held the grant, or the answer came after
     *        the lease's local validity ran out
     */
    default void renewed(LeaseDescription lease, boolean succeeded) {
    }

    /**
     * A held lease was declared lost; called at most once per grant, before its holder is interrupted.
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
}
