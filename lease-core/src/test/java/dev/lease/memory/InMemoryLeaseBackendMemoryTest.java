package dev.lease.memory;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import dev.lease.spi.GrantRequest;

/**
 * Names often come from request data ({@code invoice-#{#id}}): the backend must not keep state for every name it ever
 * granted, and dropping a name's state must cost neither exclusion nor rising tokens.
 */
class InMemoryLeaseBackendMemoryTest {

    private static GrantRequest request(String name, Duration ttl) {
        return new GrantRequest(name, ttl, reason -> { });
    }

    @Test
    void releasedNamesLeaveNoStateBehind() {
        InMemoryLeaseBackend backend = new InMemoryLeaseBackend();
        int most = 0;
        for (int i = 0; i < 100_000; i++) {
            var grant = backend.tryAcquire(request("invoice-" + i, Duration.ofMinutes(1))).orElseThrow();
            most = Math.max(most, backend.namesKept());
            backend.release(grant);
        }
        assertThat(most).as("names kept while one is held").isEqualTo(1);
        assertThat(backend.namesKept()).isZero();
    }

    @Test
    void namesThatExpiredUnreleasedAreSweptAway() {
        InMemoryLeaseBackend backend = new InMemoryLeaseBackend();
        for (int i = 0; i < 10_000; i++) {
            backend.tryAcquire(request("abandoned-" + i, Duration.ofMillis(1))).orElseThrow();
        }
        await().atMost(seconds(5)).pollDelay(Duration.ofMillis(5)).until(() -> {
            var grant = backend.tryAcquire(request("probe", Duration.ofMillis(1))).orElseThrow();
            backend.release(grant);
            return true;
        });
        for (int i = 0; i < 100_000; i++) {
            var grant = backend.tryAcquire(request("later-" + i, Duration.ofMinutes(1))).orElseThrow();
            backend.release(grant);
        }
        assertThat(backend.namesKept()).as("the expired names were swept by the sweeps that new names set off")
                .isLessThanOrEqualTo(InMemoryLeaseBackend.SWEEP_EVERY);
    }

    @Test
    void aNameGrantedAgainAfterItsStateWasDroppedGetsAHigherTokenWhateverTheClockDoes() {
        AtomicLong clock = new AtomicLong(5_000);
        InMemoryLeaseBackend backend = new InMemoryLeaseBackend(clock::get);
        var first = backend.tryAcquire(request("job", Duration.ofMinutes(1))).orElseThrow();
        backend.release(first);
        assertThat(backend.namesKept()).isZero();
        clock.set(10);
        var second = backend.tryAcquire(request("job", Duration.ofMinutes(1))).orElseThrow();
        assertThat(second.value()).isGreaterThan(first.value());
        assertThat(backend.lastToken("job")).hasValue(second.value());
        backend.release(second);
        assertThat(backend.lastToken("job")).as("remembered after release").hasValue(second.value());
    }

    @Test
    void exclusionHoldsWhileNamesAreDroppedAndRecreatedUnderContention() throws Exception {
        long seed = Long.getLong("lease-test.memory-seed", new Random().nextLong());
        System.out.println("InMemoryLeaseBackendMemoryTest seed " + seed + " (replay: -Dlease-test.memory-seed=" + seed + ")");
        InMemoryLeaseBackend backend = new InMemoryLeaseBackend();
        String[] names = {"a", "b", "c"};
        AtomicInteger[] inside = {new AtomicInteger(), new AtomicInteger(), new AtomicInteger()};
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger grants = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                Random random = new Random(seed + t);
                done.add(pool.submit(() -> {
                    for (int i = 0; i < 5_000; i++) {
                        int n = random.nextInt(names.length);
                        var grant = backend.tryAcquire(request(names[n], Duration.ofMinutes(1)));
                        if (grant.isEmpty()) {
                            if (random.nextBoolean()) {
                                backend.awaitRelease(names[n], Duration.ofMillis(1));
                            }
                            continue;
                        }
                        grants.incrementAndGet();
                        if (inside[n].incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        inside[n].decrementAndGet();
                        backend.release(grant.get());
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        }
        finally {
            pool.shutdownNow();
        }
        assertThat(grants.get()).as("seed %d", seed).isPositive();
        assertThat(overlaps.get()).as("two holders of one name at once, seed %d", seed).isZero();
        assertThat(backend.namesKept()).isZero();
    }
}
