package dev.lease.core;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;

import dev.lease.Lease;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.LeaseUnavailableException;

/**
 * A leased section that runs on no thread of its own, such as a reactive pipeline: nothing can be interrupted, so the
 * section hears of a loss through {@link #whenLost} and stops its work itself. The lease is not bound to any thread
 * ({@link dev.lease.LeaseContext} does not see it); the section passes it along its own way (the Reactor context).
 *
 * <p>Every method that talks to the store ({@link #tryAcquire}, {@link #close()}) blocks: call it off event loops.
 */
public final class DetachedSection implements AutoCloseable {

    private final HeldLease lease;
    /** A leadership term, which its election ends, not the section. */
    private final boolean term;
    /** The engine's fence at grant; null for a term, whose sections name no fence. */
    private final GrantFencing fencing;

    private DetachedSection(HeldLease lease, boolean term, GrantFencing fencing) {
        this.lease = lease;
        this.term = term;
        this.fencing = fencing;
    }

    /**
     * One grant request, waiting for nothing: the caller waits between attempts its own way (without a thread).
     * A fence at grant named by the spec is advanced by the engine before this returns.
     *
     * @param engine the engine to ask
     * @param spec the lease; its waitFor is ignored
     * @return the section, or empty when the lease is held by someone else
     * @throws dev.lease.LeaseUnavailableException when the backend failed or the engine is closing
     * @throws LeaseLostException when the fence at grant refused the new token
     */
    public static Optional<DetachedSection> tryAcquire(LeaseEngine engine, LeaseSpec spec) {
        return engine.tryAcquire(spec.withWaitFor(Duration.ZERO))
                .map(lease -> new DetachedSection((HeldLease) lease, false, engine.fencing()));
    }

    /**
     * What a caller whose wait for a busy lease is over gets, as from {@link LeaseEngine#acquire}.
     *
     * @param engine the engine that was asked
     * @param spec the lease
     * @return the exception, naming the lease, the wait and the backend
     */
    public static LeaseUnavailableException busy(LeaseEngine engine, LeaseSpec spec) {
        return new LeaseUnavailableException(spec.name(), spec.waitFor(), engine.backendId(spec.kind()));
    }

    /**
     * The current term of an election, as a section that runs in it without owning it: closing the section leaves
     * the term held.
     *
     * @param election the election
     * @return the section, or empty when this instance does not lead
     */
    public static Optional<DetachedSection> inTerm(Election election) {
        HeldLease current = election.currentTerm();
        return current == null || !current.isValid() ? Optional.empty()
                : Optional.of(new DetachedSection(current, true, null));
    }

    /** @return the lease the section holds */
    public Lease lease() {
        return lease;
    }

    /**
     * Runs {@code hook} once when the lease is declared lost (on the engine's thread that noticed it: hand real work
     * off), at once if it already was; nothing more once the section {@link #close() closed}.
     *
     * @param hook told the exception the section's caller should get
     * @return what stops the watching, for a section that ends before its lease does
     */
    public Runnable whenLost(Consumer<LeaseLostException> hook) {
        return lease.watchLoss(() -> hook.accept(lease.lostException(null)));
    }

    /**
     * What the caller must get instead of the section's outcome, when the lease did not cover the whole work: it was
     * lost, ran out, or was released meanwhile.
     *
     * @param cause what the work threw, or null
     * @return the exception, or empty while the lease still holds
     */
    public Optional<LeaseLostException> lostOrClosed(Throwable cause) {
        return lease.isLost() || lease.isClosed() ? Optional.of(lease.lostException(cause)) : Optional.empty();
    }

    /**
     * Fence at grant named by a section nested in this one, through the engine's fence (blocking): nothing when the
     * grant fenced {@code resource} already, else {@link dev.lease.spi.GrantFence#advanceOnReentry}, bounded by the
     * lease's validity.
     *
     * @param resource the resource the nested section names
     * @throws LeaseLostException when the fence refused or failed; the lease is then declared lost
     * @throws dev.lease.LeaseConfigurationException when the engine has no fence to advance
     * @throws IllegalStateException for a leadership term, whose grant fenced nothing
     */
    public void fenceOnReentry(String resource) {
        if (fencing == null) {
            throw new IllegalStateException("Lease '" + lease.name() + "' is a leadership term, and a section nested "
                    + "in it names the fence '" + resource + "': fence at grant is not done for terms; advance the "
                    + "fence in the section's own transaction instead (JdbcFence.advance / R2dbcFence.advance)");
        }
        fencing.check("A section nested in lease '" + lease.name() + "' naming fence '" + resource + "'",
                lease.kind());
        fencing.onReentry(lease, resource);
    }

    /**
     * Gives the lease up because the resource refused to be fenced at grant: declared lost (so counted and logged as
     * such) and released at once.
     *
     * @param resource the fenced resource
     * @param refusal why the fence refused
     * @return the exception for the section's caller
     */
    public LeaseLostException fenceRefused(String resource, Throwable refusal) {
        lease.markLost(LossCause.FENCE_REFUSED, "the fence of resource '" + resource + "' could not be advanced to its "
                + "token at grant, so the lease cannot be relied on: " + refusal.getMessage());
        if (!term) {
            lease.close(false);
        }
        return lease.lostException(refusal);
    }

    /** Ends the section: releases the lease (blocking on the store), unless it is an election's term. Idempotent. */
    @Override
    public void close() {
        if (!term) {
            lease.close();
        }
    }
}
