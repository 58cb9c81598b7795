package dev.lease.core;

import dev.lease.LeaseLostException;
import dev.lease.LeasedWork;

/**
 * Work run in a lease on the calling thread: bound to it, so that a loss interrupts it at once, and visible through
 * {@link dev.lease.LeaseContext}. When the lease did not cover the whole work (lost, run out, or released by the work
 * itself), the caller gets {@link LeaseLostException} instead of the work's outcome.
 */
final class BoundSections {

    private BoundSections() {
    }

    /** Runs {@code work} in a lease the section owns: released when the work ends. */
    static <T> T owning(HeldLease lease, LeasedWork<T> work) throws Throwable {
        ThreadLeases.Frames frames = ThreadLeases.enter(lease);
        lease.bindTo(frames);
        if (lease.isLost()) {
            // Lost before the thread could be told (during a slow grant, or reported while it was returned): the
            // work must not start.
            LeaseLostException lost = lease.lostException(null);
            leave(frames, lease);
            throw lost;
        }
        T result;
        try {
            result = work.run(lease);
        }
        catch (Throwable ex) {
            LeaseLostException lost = lostOrClosed(lease) ? lease.lostException(ex) : null;
            leave(frames, lease);
            throw lost != null ? lost : ex;
        }
        LeaseLostException lost = lostOrClosed(lease) ? lease.lostException(null) : null;
        leave(frames, lease);
        if (lost != null) {
            throw lost;
        }
        return result;
    }

    /**
     * Runs {@code work} in a lease an enclosing section of this thread holds; the enclosing section releases it. A
     * resource the request names is fenced through {@code fencing} unless the grant fenced it already.
     *
     * @throws IllegalStateException when the enclosing section holds the name as another kind
     */
    static <T> T reentering(HeldLease lease, LeaseRequest request, GrantFencing fencing, LeasedWork<T> work)
            throws Throwable {
        if (lease.kind() != request.kind()) {
            throw new IllegalStateException("Lease '" + request.name() + "' is already held by this thread as "
                    + lease.kind() + " and cannot be re-entered as " + request.kind()
                    + "; give the two sections different names or the same kind");
        }
        lease.checkValid();
        if (request.fence() != null) {
            fencing.onReentry(lease, request.fence());
        }
        ThreadLeases.Frames frames = ThreadLeases.enter(lease);
        T result;
        try {
            result = work.run(lease);
        }
        finally {
            frames.exit(lease);
        }
        lease.checkValid();
        return result;
    }

    /**
     * Runs {@code work} in a leadership term the section does not own: bound to the thread like a leased section (so
     * it is interrupted when the term is lost), but the term stays held when the work ends.
     */
    static <T> T inTerm(HeldLease term, LeasedWork<T> work) throws Throwable {
        ThreadLeases.Frames frames = ThreadLeases.enter(term);
        term.bindTo(frames);
        T result;
        try {
            if (term.isLost()) {
                throw term.lostException(null);
            }
            result = work.run(term);
        }
        catch (LeaseLostException ex) {
            leaveTerm(frames, term);
            throw ex;
        }
        catch (Throwable ex) {
            LeaseLostException lost = term.isLost() ? term.lostException(ex) : null;
            leaveTerm(frames, term);
            throw lost != null ? lost : ex;
        }
        LeaseLostException lost = term.isLost() ? term.lostException(null) : null;
        leaveTerm(frames, term);
        if (lost != null) {
            throw lost;
        }
        return result;
    }

    /** A lease the work closed itself no longer covered the rest of the work: that is a loss too. */
    private static boolean lostOrClosed(HeldLease lease) {
        return lease.isLost() || lease.isClosed();
    }

    private static void leave(ThreadLeases.Frames frames, HeldLease lease) {
        frames.exit(lease);
        lease.close();
    }

    private static void leaveTerm(ThreadLeases.Frames frames, HeldLease term) {
        term.unbind(frames);
        frames.exit(term);
    }
}
