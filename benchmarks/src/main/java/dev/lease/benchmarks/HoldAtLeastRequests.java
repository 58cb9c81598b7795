package dev.lease.benchmarks;

import java.time.Duration;
import java.util.Collection;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.redis.RedisLeaseBackend;
import dev.lease.spi.ForwardingLeaseBackend;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

/**
 * The counted rows of {@code holdAtLeast} ({@code --only=once}): store requests per section on Redis, for a section
 * that returns at once and is held over for {@code hold}, against a section whose body keeps the lease for the same
 * time; each request is counted by a {@link ForwardingLeaseBackend} in front of the store. Not a timing.
 */
final class HoldAtLeastRequests {

    private static final Duration TTL = Duration.ofMillis(1500);
    private static final Duration RENEW = Duration.ofMillis(500);

    private final Benchmarks harness;
    private final Benchmarks.Settings settings;

    HoldAtLeastRequests(Benchmarks harness, Benchmarks.Settings settings) {
        this.harness = harness;
        this.settings = settings;
    }

    void run() throws Exception {
        if (!harness.stores("redis")) {
            return;
        }
        LettuceConnectionFactory redis = harness.servers.redisFactory();
        Counting<?> counting = new Counting<>(harness.own(new RedisLeaseBackend(redis, "hold-at-least:")));
        Duration hold = settings.smoke() ? Duration.ofSeconds(2) : Duration.ofSeconds(5);
        int sections = settings.smoke() ? 2 : 5;
        try (LeaseEngine engine = new LeaseEngine(BackendRouter.of(Map.of(LeaseKind.EFFICIENCY, counting)),
                new LeaseDefaults(TTL, RENEW))) {
            LeaseSpec spec = LeaseSpec.of("hold-at-least", LeaseKind.EFFICIENCY).withTtl(TTL).withRenewEvery(RENEW);
            // Not counted: the first request connects to Redis and loads the scripts.
            engine.execute(spec.withTtl(Duration.ofSeconds(30)).withRenewEvery(Duration.ofSeconds(10))
                    .withWaitFor(Duration.ofSeconds(30)), lease -> null);
            section(engine, counting, sections, "section held over by holdAtLeast (returns at once)", hold, () -> {
                engine.execute(spec.withHoldAtLeast(hold), lease -> null);
                awaitReleased(engine, hold);
            });
            section(engine, counting, sections, "section whose body holds it as long (no holdAtLeast)", hold, () -> {
                engine.execute(spec, lease -> {
                    Thread.sleep(hold.toMillis());
                    return null;
                });
            });
        }
    }

    @FunctionalInterface
    private interface Section {
        void run() throws Exception;
    }

    private void section(LeaseEngine engine, Counting<?> counting, int sections, String contender, Duration hold,
            Section work) throws Exception {
        counting.calls.clear();
        for (int i = 0; i < sections; i++) {
            work.run();
        }
        long renewals = counting.count("renew");
        long others = counting.calls.values().stream().mapToLong(LongAdder::sum).sum() - renewals;
        String what = String.format(Locale.ROOT, "%d sections of %d ms, ttl %d ms, renewal every %d ms on Redis; %s",
                sections, hold.toMillis(), TTL.toMillis(), RENEW.toMillis(), counting.calls);
        String section = "holdAtLeast: store requests per section (counted)";
        harness.addRow(new Row(section, contender, "requests other than renewals per section",
                others / (double) sections, Double.NaN, sections, Double.NaN, what));
        harness.addRow(new Row(section, contender, "renewals per section", renewals / (double) sections, Double.NaN,
                sections, Double.NaN, null));
    }

    /** The hold ends on the engine's own timer: wait for its release, which is counted with the section. */
    private static void awaitReleased(LeaseEngine engine, Duration hold) throws InterruptedException {
        long deadline = System.nanoTime() + hold.plusSeconds(10).toNanos();
        while (!engine.held().isEmpty()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the held-over lease was not released: " + engine.held());
            }
            Thread.sleep(10);
        }
    }

    /** Counts the requests sent to the store, per method; a batched renewal counts one per lease, as sent. */
    private static final class Counting<G extends Grant> extends ForwardingLeaseBackend<G> {

        final Map<String, LongAdder> calls = new ConcurrentHashMap<>();

        Counting(LeaseBackend<G> target) {
            super(target);
        }

        long count(String method) {
            LongAdder adder = calls.get(method);
            return adder == null ? 0 : adder.sum();
        }

        private void note(String method, int n) {
            calls.computeIfAbsent(method, k -> new LongAdder()).add(n);
        }

        @Override
        public Optional<G> tryAcquire(GrantRequest request) throws Exception {
            note("tryAcquire", 1);
            return super.tryAcquire(request);
        }

        @Override
        public boolean renew(G grant) throws Exception {
            note("renew", 1);
            return super.renew(grant);
        }

        @Override
        public Set<G> renewAll(Collection<G> grants) throws Exception {
            note("renew", grants.size());
            return super.renewAll(grants);
        }

        @Override
        public void release(G grant) throws Exception {
            note("release", 1);
            super.release(grant);
        }

        @Override
        public void abandon(GrantRequest request) throws Exception {
            note("abandon", 1);
            super.abandon(request);
        }
    }
}
