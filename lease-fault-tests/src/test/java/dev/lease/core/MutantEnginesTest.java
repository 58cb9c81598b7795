package dev.lease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.spi.LeaseBackend;
import dev.lease.testing.TestTiming;

/** The mutant engine must lack exactly the local deadline, or the fault suite's detection table measures nothing. */
class MutantEnginesTest {

    private static final Duration TTL = Duration.ofMillis(300);

    @Test
    void withoutLocalDeadlineALeaseOutlivesStalledRenewalsButNotTheBackendsWord() {
        ScriptedBackend realStore = new ScriptedBackend();
        ScriptedBackend mutantStore = new ScriptedBackend();
        realStore.renewal.set(ScriptedBackend.Renewal.HANG);
        mutantStore.renewal.set(ScriptedBackend.Renewal.HANG);
        try (LeaseEngine real = new LeaseEngine(router(realStore), LeaseDefaults.standard());
                LeaseEngine mutant = MutantEngines.withoutLocalDeadline(router(mutantStore), LeaseDefaults.standard(),
                        null);
                Lease mutantLease = mutant.acquire(LeaseSpec.of("stalled", LeaseKind.CORRECTNESS).withTtl(TTL));
                Lease realLease = real.acquire(LeaseSpec.of("stalled", LeaseKind.CORRECTNESS).withTtl(TTL))) {
            // The real engine's lease, acquired after the mutant's, ends on its deadline while renewals hang.
            await().atMost(TestTiming.seconds(10)).until(() -> !realLease.isValid());
            assertThat(mutantLease.isValid()).as("the mutant's lease, renewals stalled, past its ttl").isTrue();
            assertThat(mutantStore.renewals.get()).as("the mutant still renews").isPositive();
            mutantStore.lastListener.get().leaseLost("session expired");
            assertThat(mutantLease.isValid()).as("the mutant's lease after the backend reported it lost").isFalse();
            // Before the engines close, which would otherwise wait for the hanging renewals.
            realStore.hang.countDown();
            mutantStore.hang.countDown();
        }
        finally {
            realStore.hang.countDown();
            mutantStore.hang.countDown();
        }
    }

    private static BackendRouter router(LeaseBackend<?> backend) {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, backend);
        return BackendRouter.of(routes);
    }
}
