package dev.lease.aop;

import java.util.Optional;
import java.util.function.Supplier;

import dev.lease.Durations;
import dev.lease.FencingToken;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeasedWork;
import dev.lease.core.Campaigns;
import dev.lease.core.Election;
import dev.lease.core.LeaseEngine;
import dev.lease.leader.Leadership;

/**
 * One declared election as the application sees it, across stops and starts of its context: the same
 * {@link Leadership} (which beans, gauges and the Actuator keep) campaigning through a new {@link Election} each time
 * the context starts. An {@link Election} is closed for good when the context stops, so restarting (checkpoint and
 * restore stop and start the context) must campaign with a fresh one, as a fresh start would.
 */
final class RestartableElection implements Leadership, Campaigns {

    private final LeaseEngine engine;
    private final LeaseSpec spec;
    private final Election.Listener listener;
    /** The campaign while the context runs; null while it is stopped. */
    private volatile Election current;

    RestartableElection(LeaseEngine engine, LeaseSpec spec, Election.Listener listener) {
        this.engine = engine;
        this.spec = spec;
        this.listener = listener;
    }

    /** Starts a new campaign, unless one runs. */
    synchronized void start() {
        if (current == null) {
            Election election = engine.election(spec, listener);
            election.start();
            current = election;
        }
    }

    /**
     * Ends this campaign's use: from now on this instance does not lead, and {@code @LeaderOnly} work is skipped.
     *
     * @return the campaign, for the caller to close (which releases leadership and may take a while), or null when
     *         none ran
     */
    synchronized Election detach() {
        Election election = current;
        current = null;
        return election;
    }

    /** The campaign while the context runs; null while it is stopped. */
    @Override
    public Election running() {
        return current;
    }

    /** As {@link Election#runAsLeader}; while stopped, not leader. */
    <T> T runAsLeader(LeasedWork<T> work, Supplier<T> otherwise) throws Throwable {
        Election election = current;
        return election == null ? otherwise.get() : election.runAsLeader(work, otherwise);
    }

    @Override
    public String election() {
        return spec.name();
    }

    @Override
    public LeaseKind kind() {
        return spec.kind();
    }

    @Override
    public boolean isLeader() {
        Election election = current;
        return election != null && election.isLeader();
    }

    @Override
    public Optional<FencingToken> token() {
        Election election = current;
        return election == null ? Optional.empty() : election.token();
    }

    /** While stopped there is no term to yield. */
    @Override
    public void yieldLeadership() {
        Election election = current;
        if (election != null) {
            election.yieldLeadership();
        }
    }

    @Override
    public String toString() {
        Election election = current;
        return election != null ? election.toString() : "Election[" + spec.name() + ", " + spec.kind()
                + ", stopped, ttl " + spec.ttl().map(Durations::format).orElse("default") + "]";
    }
}
