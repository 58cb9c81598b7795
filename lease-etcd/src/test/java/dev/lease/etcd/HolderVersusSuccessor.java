package dev.lease.etcd;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.GrantRequest;
import dev.lease.testing.BlockingWork;

/**
 * One fault, two instances: a holder inside a leased section on one backend, a successor polling for the same name on
 * another. After the fault cuts the holder off, it must be interrupted (its local validity ran out or a renewal failed)
 * before etcd lets the successor in, and the successor's token must be higher.
 */
final class HolderVersusSuccessor {

    /** What a fault scenario saw. */
    record Outcome(long holderToken, long successorToken, long interruptedAt, long successorGrantedAt,
            Throwable holderFailure) {
    }

    @FunctionalInterface
    interface Fault {
        void inject() throws Exception;
    }

    private HolderVersusSuccessor() {
    }

    static LeaseEngine engine(EtcdLeaseBackend backend) {
        Map<LeaseKind, dev.lease.spi.LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, backend);
        routes.put(LeaseKind.EFFICIENCY, backend);
        return new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard());
    }

    static Outcome run(EtcdLeaseBackend holder, EtcdLeaseBackend successor, String name, Duration ttl, Fault fault)
            throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        AtomicLong holderToken = new AtomicLong();
        AtomicLong interruptedAt = new AtomicLong();
        BlockingWork work = new BlockingWork();
        try (LeaseEngine engine = engine(holder)) {
            Future<String> call = pool.submit(() -> engine.execute(LeaseSpec.of(name, LeaseKind.CORRECTNESS).withTtl(ttl)
                    .withWaitFor(seconds(10)),
                    lease -> {
                        holderToken.set(lease.token().value());
                        try {
                            return work.doInLease(lease);
                        }
                        finally {
                            interruptedAt.set(System.nanoTime());
                        }
                    }));
            assertThat(work.awaitStarted(seconds(30))).as("holder started").isTrue();
            fault.inject();
            AtomicReference<EtcdGrant> next = new AtomicReference<>();
            AtomicLong grantedAt = new AtomicLong();
            await().atMost(ttl.multipliedBy(4).plus(seconds(60))).pollInterval(Duration.ofMillis(20)).ignoreExceptions()
                    .until(() -> {
                Optional<EtcdGrant> granted = successor.tryAcquire(new GrantRequest(name, seconds(30), reason -> { }));
                if (granted.isPresent()) {
                    grantedAt.set(System.nanoTime());
                    next.set(granted.get());
                }
                return granted.isPresent();
            });
            Throwable failure;
            try {
                call.get(seconds(30).toMillis(), TimeUnit.MILLISECONDS);
                failure = null;
            }
            catch (ExecutionException ex) {
                failure = ex.getCause();
            }
            successor.release(next.get());
            assertThat(failure).as("the holder's caller").isInstanceOf(LeaseLostException.class);
            assertThat(work.wasInterrupted()).as("holder interrupted").isTrue();
            return new Outcome(holderToken.get(), next.get().createRevision(), interruptedAt.get(), grantedAt.get(),
                    failure);
        }
        finally {
            pool.shutdownNow();
        }
    }

    /** The rule every fault must keep. */
    static void assertSafe(Outcome outcome) {
        assertThat(outcome.interruptedAt()).as("holder interrupted").isPositive();
        assertThat(outcome.interruptedAt() - outcome.successorGrantedAt())
                .as("holder interrupted before the successor's grant (nanoTime difference)").isNegative();
        assertThat(outcome.successorToken()).as("successor's token").isGreaterThan(outcome.holderToken());
    }
}
