package dev.lease.samples.reports;

import org.springframework.context.annotation.Profile;
import org.springframework.stereotype.Service;

import dev.lease.LeaseKind;
import dev.lease.Leased;

/**
 * A job that would need a CORRECTNESS lease, in an application whose only backend is Redis: with the profile
 * {@code correctness-on-redis} the application refuses to start, naming this method and the fix.
 */
@Service
@Profile("correctness-on-redis")
class MisroutedLedgerJob {

    @Leased(name = "ledger-close", kind = LeaseKind.CORRECTNESS)
    public void closeTheBooks() {
        // Never runs: the application does not start.
    }
}
