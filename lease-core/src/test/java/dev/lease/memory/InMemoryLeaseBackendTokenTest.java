package dev.lease.memory;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;

/**
 * In-memory tokens must rise across restarts of the JVM, since a fenced table outlives the process, and strictly
 * within one JVM whatever the wall clock does.
 */
class InMemoryLeaseBackendTokenTest {

    @Test
    void aRestartedBackendIssuesTokensAboveTheEarlierOnes() {
        InMemoryLeaseBackend before = new InMemoryLeaseBackend();
        long lastBefore = grantAndRelease(before, "billing", 3).get(2);

        // The earlier JVM's tokens may run ahead of the clock by a grant per microsecond; a restart takes far longer.
        await().atMost(seconds(5)).until(() -> ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now()) > lastBefore);
        InMemoryLeaseBackend afterRestart = new InMemoryLeaseBackend();
        assertThat(grantAndRelease(afterRestart, "billing", 1).get(0)).isGreaterThan(lastBefore);
    }

    @Test
    void tokensFollowTheWallClockInMicroseconds() {
        AtomicLong clock = new AtomicLong(1_000);
        InMemoryLeaseBackend before = new InMemoryLeaseBackend(clock::get);
        assertThat(grantAndRelease(before, "job", 3)).containsExactly(1_000L, 1_001L, 1_002L);

        clock.set(2_000);
        InMemoryLeaseBackend afterRestart = new InMemoryLeaseBackend(clock::get);
        assertThat(grantAndRelease(afterRestart, "job", 1)).containsExactly(2_000L);
        assertThat(afterRestart.lastToken("job")).hasValue(2_000);
    }

    @Test
    void tokensStrictlyIncreaseWhenGrantsOutrunAClockThatStandsStillOrGoesBack() {
        AtomicLong clock = new AtomicLong(5_000);
        InMemoryLeaseBackend backend = new InMemoryLeaseBackend(clock::get);
        List<Long> tokens = new ArrayList<>(grantAndRelease(backend, "job", 3));
        clock.set(10);
        tokens.addAll(grantAndRelease(backend, "job", 2));
        clock.set(5_003);
        tokens.addAll(grantAndRelease(backend, "job", 1));
        assertThat(tokens).containsExactly(5_000L, 5_001L, 5_002L, 5_003L, 5_004L, 5_005L);
    }

    @Test
    void theRealClockKeepsTokensStrictlyIncreasingUnderFastGrants() {
        InMemoryLeaseBackend backend = new InMemoryLeaseBackend();
        List<Long> tokens = grantAndRelease(backend, "fast", 1_000);
        for (int i = 1; i < tokens.size(); i++) {
            assertThat(tokens.get(i)).as("token %d", i).isGreaterThan(tokens.get(i - 1));
        }
    }

    private static List<Long> grantAndRelease(InMemoryLeaseBackend backend, String name, int grants) {
        List<Long> tokens = new ArrayList<>();
        for (int i = 0; i < grants; i++) {
            var grant = backend.tryAcquire(new GrantRequest(name, Duration.ofMinutes(1), reason -> { })).orElseThrow();
            tokens.add(grant.token().orElseThrow());
            backend.release(grant);
        }
        return tokens;
    }
}
