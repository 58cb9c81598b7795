package dev.lease.core;

import dev.lease.spi.GrantFence;

/**
 * Broken engines for the fault suite's mutant runs ({@code dev.lease.faults.Mutant}): each one lacks a rule the
 * library keeps, so that a fault scenario that cannot tell it from the real engine is seen to prove nothing about
 * that rule. Test code only: it reaches the package-private clocks of the engine's builder.
 */
public final class MutantEngines {

    private MutantEngines() {
    }

    /**
     * An engine whose leases never end on the local deadline: their validity clock stands still, so neither a
     * stalled renewal nor a paused process makes this process stop believing in a lease on its own; only the
     * backend's word (a refused or failed renewal, a session loss) does. Waiting for a busy lease still runs on the
     * real monotonic clock.
     */
    public static LeaseEngine withoutLocalDeadline(BackendRouter router, LeaseDefaults defaults,
            GrantFence grantFence) {
        return LeaseEngine.builder(router).defaults(defaults).grantFence(grantFence).validityClock(() -> 0L).build();
    }
}
