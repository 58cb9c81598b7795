package dev.lease.etcd;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
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
import dev.lease.core.LeaseDescription;
import dev.lease.core.LeaseEngine;
import dev.lease.core.LeaseEngineListener;
import dev.lease.core.LossCause;
import dev.lease.spi.GrantRequest;
import dev.lease.testing.BlockingWork;

/**
 * One fault, two instances: a holder inside a leased section on one backend, a successor polling for the same name on
 * another. After the fault cuts the holder off, its engine must declare the lease lost and interrupt the holder (its
 * local validity ran out or a renewal failed) before etcd lets the successor in, and the successor's token must be
 * higher.
 * <p>
 * The loss is timed where the engine decides it, not where the holder's thread notices it: when the engine's
 * {@link LeaseEngineListener#lost} hears of it, which the engine calls right after interrupting the holder's thread,
 * so it is never earlier than the interrupt. The holder's own {@code finally} runs when its thread next gets a CPU,
 * which under load lags the engine's interrupt by tens of milliseconds and says nothing about the rule. The
 * successor's grant is timed when its successful request returned: etcd granted it before then. Its send time would not
 * do: the engine's local deadline is only promised to come before etcd's expiry, and the successful request may have
 * been sent just before etcd revoked the holder's lease, while still in flight.
 */
final class HolderVersusSuccessor {

    /** What a fault scenario saw. */
    record Outcome(long holderToken, long successorToken, Long lostAt, long successorGrantedAt,
            Throwable holderFailure) {
    }

    @FunctionalInterface
    interface Fault {
        void inject() throws Exception;
    }

    private HolderVersusSuccessor() {
    }

    static LeaseEngine engine(EtcdLeaseBackend backend) {
        return engine(backend, new LeaseEngineListener() { });
    }

    private static LeaseEngine engine(EtcdLeaseBackend backend, LeaseEngineListener listener) {
        Map<LeaseKind, dev.lease.spi.LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, backend);
        routes.put(LeaseKind.EFFICIENCY, backend);
        return LeaseEngine.builder(BackendRouter.of(routes)).defaults(LeaseDefaults.standard())
                .listeners(List.of(listener)).build();
    }

    static Outcome run(EtcdLeaseBackend holder, EtcdLeaseBackend successor, String name, Duration ttl, Fault fault)
            throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        AtomicLong holderToken = new AtomicLong();
        // nanoTime may be any long, so "not yet" is null rather than 0.
        AtomicReference<Long> lostAt = new AtomicReference<>();
        LeaseEngineListener losses = new LeaseEngineListener() {
            @Override
            public void lost(LeaseDescription lease, OptionalLong token, LossCause cause) {
                long now = System.nanoTime();
                if (lease.name().equals(name) && token.equals(OptionalLong.of(holderToken.get()))) {
                    lostAt.compareAndSet(null, now);
                }
            }
        };
        BlockingWork work = new BlockingWork();
        try (LeaseEngine engine = engine(holder, losses)) {
            Future<String> call = pool.submit(() -> engine.execute(LeaseSpec.of(name, LeaseKind.CORRECTNESS).withTtl(ttl)
                    .withWaitFor(seconds(10)),
                    lease -> {
                        holderToken.set(lease.token().value());
                        return work.doInLease(lease);
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
            return new Outcome(holderToken.get(), next.get().createRevision(), lostAt.get(), grantedAt.get(), failure);
        }
        finally {
            pool.shutdownNow();
        }
    }

    /** The rule every fault must keep. */
    static void assertSafe(Outcome outcome) {
        assertThat(outcome.lostAt()).as("the engine declared the holder's lease lost").isNotNull();
        assertThat(outcome.lostAt() - outcome.successorGrantedAt())
                .as("the engine interrupted the holder before the successor's grant (nanoTime difference)")
                .isNegative();
        assertThat(outcome.successorToken()).as("successor's token").isGreaterThan(outcome.holderToken());
    }
}
