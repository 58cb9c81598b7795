package dev.lease.faults.scenarios.jdbc;

import static dev.lease.testing.TestTiming.millis;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.core.LeaseEngine;
import dev.lease.faults.harness.CrashablePostgres;
import dev.lease.faults.harness.ReusedConnections;
import dev.lease.faults.harness.Seeds;
import dev.lease.faults.harness.ZooKeeperHolder;
import dev.lease.jdbc.JdbcLeaseBackend;
import dev.lease.spi.ForwardingLeaseBackend;
import dev.lease.spi.Grant;
import dev.lease.spi.LeaseBackend;
import dev.lease.testing.BlockingWork;
import dev.lease.testing.CallOutcome;
import dev.lease.testing.PostgresServer;
import dev.lease.testing.TcpProxy;

/**
 * Batched renewal when a link freezes with a batch in flight: two instances on one PostgreSQL lease table, each
 * through a link of its own, each holding many leases that the engine renews together. The frozen instance can no
 * longer confirm any of its leases, so exactly those are lost and their holders interrupted, by the local deadline
 * while the batch still hangs; the other instance's leases, renewed all along, are not touched.
 */
class BatchedRenewalFaultScenariosTest {

    private static final Log log = LogFactory.getLog(BatchedRenewalFaultScenariosTest.class);

    // Long enough for twenty leases on two engines to renew on a machine at load 20 (a soak beside other builds lost
    // a survivor's lease at 2 s before the freeze); the freeze still ends the victim's within a few seconds.
    private static final Duration TTL = seconds(4);
    private static final Duration RENEW_EVERY = millis(1000);
    private static final Duration BOUND = seconds(10);
    private static final int LEASES = 10;

    private static PostgresServer postgres;

    @BeforeAll
    static void start() throws Exception {
        postgres = PostgresServer.start();
        new JdbcLeaseBackend(postgres.dataSource()).createSchema();
    }

    @AfterAll
    static void stop() throws IOException {
        if (postgres != null) {
            postgres.close();
        }
    }

    @Test
    void aBatchInFlightWhenTheLinkFreezesLosesExactlyTheLeasesOfTheFrozenInstance() throws Exception {
        long seed = Seeds.of("batched-renewal-frozen-link");
        Random random = new Random(seed);
        int victim = (int) Math.floorMod(seed, 2L);
        int survivor = 1 - victim;
        ExecutorService holders = Executors.newCachedThreadPool();
        List<TcpProxy> links = List.of(new TcpProxy(postgres.port()), new TcpProxy(postgres.port()));
        List<Observed<?>> backends = new ArrayList<>();
        List<LeaseEngine> engines = new ArrayList<>();
        try {
            for (TcpProxy link : links) {
                Observed<?> backend = new Observed<>(new JdbcLeaseBackend(store(link)));
                backends.add(backend);
                engines.add(ZooKeeperHolder.engine(backend, LeaseKind.CORRECTNESS));
            }
            List<List<Section>> sections = List.of(new ArrayList<>(), new ArrayList<>());
            for (int instance = 0; instance < 2; instance++) {
                for (int i = 0; i < LEASES; i++) {
                    sections.get(instance).add(Section.start(holders, engines.get(instance),
                            "batch-frozen-" + instance + "-" + i));
                }
            }
            for (List<Section> of : sections) {
                for (Section section : of) {
                    assertThat(section.work.awaitStarted(BOUND)).as(() -> section.name + " started; its call: "
                            + CallOutcome.of(section.call)).isTrue();
                }
            }

            // A slow link keeps a batch in flight long enough to freeze under it; how slow is seeded.
            links.get(victim).delay(millis(100 + random.nextInt(150)));
            Observed<?> frozen = backends.get(victim);
            await().atMost(BOUND).pollInterval(Duration.ofMillis(1)).until(() -> frozen.inFlight.get() > 1);
            links.get(victim).freeze();
            long frozenAt = System.nanoTime();
            log.info("Froze the link of instance " + victim + " with " + frozen.inFlight.get()
                    + " grants in renewal calls in flight");

            for (Section section : sections.get(victim)) {
                assertThatThrownBy(() -> section.call.get(TTL.plus(BOUND).toMillis(), TimeUnit.MILLISECONDS))
                        .as("%s of the frozen instance", section.name)
                        .isInstanceOf(ExecutionException.class).cause().isInstanceOf(LeaseLostException.class)
                        .hasCauseInstanceOf(InterruptedException.class);
                assertThat(section.work.wasInterrupted()).as("%s interrupted", section.name).isTrue();
            }
            log.info("Every lease of the frozen instance lost after "
                    + Duration.ofNanos(System.nanoTime() - frozenAt).toMillis() + " ms");
            // Longer than the ttl since the freeze: only renewals that kept succeeding keep the others held.
            await().during(TTL.plus(RENEW_EVERY)).atMost(TTL.plus(RENEW_EVERY).plus(BOUND))
                    .pollInterval(Duration.ofMillis(20))
                    .failFast("a lease of the instance whose link stayed up was lost",
                            () -> !sections.get(survivor).stream().allMatch(Section::held))
                    .until(() -> sections.get(survivor).stream().allMatch(Section::held));

            // The store agrees: the frozen instance's leases expired there.
            Section expired = sections.get(victim).get(0);
            try (Lease taken = engines.get(survivor).acquire(spec(expired.name).withWaitFor(BOUND))) {
                assertThat(taken.isValid()).as("%s taken over by the other instance", expired.name).isTrue();
            }

            // The frozen batch's answer, arriving now, revives none of the leases it was for.
            links.get(victim).unfreeze();
            links.get(victim).delay(Duration.ZERO);
            await().atMost(BOUND).until(() -> frozen.inFlight.get() == 0);
            for (Section section : sections.get(victim)) {
                assertThat(section.lease).as("%s after the late answer", section.name)
                        .matches(lease -> lease == null || !lease.isValid());
            }
            // And the store still holds the other instance's leases: back on its link, the frozen one cannot have them.
            Section kept = sections.get(survivor).get(0);
            assertThat(engines.get(victim).tryAcquire(spec(kept.name).withWaitFor(Duration.ZERO)))
                    .as("%s still held", kept.name).isEmpty();
            assertThat(sections.get(survivor)).as("the other instance's leases").allMatch(Section::held);
        }
        finally {
            links.forEach(TcpProxy::unfreeze);
            engines.forEach(LeaseEngine::close);
            holders.shutdownNow();
            links.forEach(TcpProxy::close);
        }
    }

    private static LeaseSpec spec(String name) {
        return LeaseSpec.of(name, LeaseKind.CORRECTNESS).withTtl(TTL).withRenewEvery(RENEW_EVERY);
    }

    /** Reached through {@code link} on reused connections without a socket timeout: frozen, a statement waits. */
    private static DataSource store(TcpProxy link) {
        return new ReusedConnections(CrashablePostgres.dataSource(link.port(),
                Map.of("ApplicationName", "lease-fault-batched-renewal")));
    }

    /** A leased section that blocks until interrupted. */
    private static final class Section {

        final String name;
        final BlockingWork work = new BlockingWork();
        volatile Future<String> call;
        volatile Lease lease;

        private Section(String name) {
            this.name = name;
        }

        static Section start(ExecutorService holders, LeaseEngine engine, String name) {
            Section section = new Section(name);
            // Twenty first grants at once, each on a new connection: on a loaded machine one may take longer than
            // a single request's time, so each retries for the bound instead of failing the setup.
            section.call = holders.submit(() -> engine.execute(spec(name).withWaitFor(BOUND), lease -> {
                section.lease = lease;
                return section.work.doInLease(lease);
            }));
            return section;
        }

        boolean held() {
            return !call.isDone() && !work.wasInterrupted() && lease != null && lease.isValid();
        }
    }

    /**
     * The real backend, with a count of the grants in its renewal calls in flight. It renews in batches the way the
     * backend does ({@link LeaseBackend#renewAll}, one statement where the backend implements it), and changes no
     * answer.
     */
    private static final class Observed<G extends Grant> extends ForwardingLeaseBackend<G> {

        final AtomicInteger inFlight = new AtomicInteger();
        private final AtomicInteger largest = new AtomicInteger();

        Observed(LeaseBackend<G> backend) {
            super(backend);
        }

        int largestInFlight() {
            return largest.get();
        }

        @Override
        public Set<G> renewAll(Collection<G> grants) throws Exception {
            largest.accumulateAndGet(inFlight.addAndGet(grants.size()), Math::max);
            try {
                return target().renewAll(grants);
            }
            finally {
                inFlight.addAndGet(-grants.size());
            }
        }
    }
}
