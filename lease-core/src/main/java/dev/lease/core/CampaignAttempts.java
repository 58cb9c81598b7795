package dev.lease.core;

import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;

import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseSpec;

/**
 * The engine's side of one election's campaign: each attempt at the term's lease goes along the engine's corridor,
 * resolved afresh (a backend's limits, such as ZooKeeper's negotiated session timeout, may change) and then acquired;
 * observers hear of campaigns ({@link LeaseEngineListener#campaigning}), never of acquires. Used by the campaign
 * thread alone.
 */
final class CampaignAttempts {

    /** How long one attempt waits for the lease before asking again; the wait is woken by releases. */
    private static final Duration ATTEMPT_WAIT = Duration.ofSeconds(30);

    private final LeaseSpec spec;
    private final LeaseRequests requests;
    private final Acquirer acquirer;
    private final LeaseEngineListener observers;
    /** The term's lease, as observers see the campaigns for it. */
    private final LeaseDescription description;
    /** The campaign in progress, from the first attempt after the start or a term until one wins. */
    private LeaseEngineListener.Campaign observed;

    /**
     * @throws LeaseConfigurationException when the kind is not routed to a backend that can serve it, or the timing
     *         cannot work there
     * @throws IllegalArgumentException when the name is not a valid lease name
     */
    CampaignAttempts(LeaseSpec spec, LeaseRequests requests, Acquirer acquirer, LeaseEngineListener observers) {
        this.description = requests.resolve(spec).description();
        this.spec = spec.withWaitFor(ATTEMPT_WAIT);
        this.requests = requests;
        this.acquirer = acquirer;
        this.observers = observers;
    }

    /** Whether the engine stopped granting: no attempt can succeed any more. */
    boolean engineClosed() {
        return acquirer.isClosed();
    }

    /**
     * One attempt: waits for the term's lease up to {@link #ATTEMPT_WAIT}.
     *
     * @return the term's lease, or empty when another instance held it for the whole wait
     * @throws RuntimeException what the acquire threw: the backend failed, the engine is closing, the routing or
     *         timing no longer work
     */
    Optional<HeldLease> attempt() {
        if (observed == null) {
            observed = observers.campaigning(description);
        }
        Optional<HeldLease> granted = acquirer.acquire(requests.resolve(spec), attemptOf(observed));
        if (granted.isPresent()) {
            // Won: the campaign hears of the term's end when the term's lease is closed.
            observed = null;
        }
        return granted;
    }

    /** The campaign thread stops: a campaign still in progress ends without a term. */
    void stop() {
        if (observed != null) {
            observed.stopped();
            observed = null;
        }
    }

    /**
     * An attempt is not an acquire: a follower's attempts would show an acquire always pending, and a failover an
     * acquire as long as the former leader's ttl. Only the attempt that wins tells the campaign.
     */
    private static LeaseEngineListener.Acquisition attemptOf(LeaseEngineListener.Campaign campaign) {
        return new LeaseEngineListener.Acquisition() {
            @Override
            public Runnable granted(OptionalLong token) {
                return campaign.won(token);
            }

            @Override
            public void busy() {
            }

            @Override
            public void failed(Throwable error) {
            }
        };
    }
}
