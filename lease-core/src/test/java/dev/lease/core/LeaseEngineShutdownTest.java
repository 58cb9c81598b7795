package dev.lease.core;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.testing.BlockingWork;

/**
 * Closing the engine while leases are held and the store hangs on releases (a store that answers only at its
 * client timeout): every held lease turns invalid before any release is sent, the releases go out together, and
 * closing returns at the end of the grace period whatever the releases do.
 */
class LeaseEngineShutdownTest {

    private static final Duration TTL = Duration.ofMinutes(10);

    private final ScriptedBackend scripted = new ScriptedBackend();
    private final LeaseEngine engine = LeaseEngineTest.engineOver(scripted);
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        scripted.hang.countDown();
        pool.shutdownNow();
        engine.close();
    }

    @Test
    void everyHeldLeaseIsLostAtOnceAndTheReleasesGoOutTogetherWithinTheGracePeriod() throws Exception {
        List<Lease> held = new ArrayList<>();
        for (String name : List.of("a", "b", "c")) {
            held.add(engine.acquire(LeaseSpec.of(name, LeaseKind.CORRECTNESS).withTtl(TTL)));
        }
        BlockingWork work = new BlockingWork();
        Future<String> section = pool.submit(() -> engine.execute(
                LeaseSpec.of("d", LeaseKind.CORRECTNESS).withTtl(TTL), work));
        assertThat(work.awaitStarted(seconds(10))).isTrue();
        List<String> validAtARelease = new CopyOnWriteArrayList<>();
        scripted.duringRelease = () -> held.stream().filter(Lease::isValid).map(Lease::name)
                .forEach(validAtARelease::add);
        scripted.releaseBlocks = true;
        engine.shutdownGrace(seconds(2));

        Thread closing = new Thread(engine::close, "closing");
        closing.start();

        await().atMost(seconds(10)).until(() -> scripted.releases.get() == 4);
        assertThat(validAtARelease).as("leases still valid when a release was sent").isEmpty();
        assertThat(held).noneMatch(Lease::isValid);
        assertThat(scripted.releasesDone).as("releases that returned, all four being out at once").hasValue(0);
        assertThatSectionWasToldItLostItsLease(section);

        closing.join(seconds(2).plus(seconds(10)).toMillis());
        assertThat(closing.isAlive()).as("close still waiting for releases that hang, past its grace period")
                .isFalse();
        assertThat(scripted.releasesDone).as("releases that returned before close did").hasValue(0);

        scripted.hang.countDown();
        await().atMost(seconds(10)).until(() -> scripted.releasesDone.get() == 4);
    }

    private static void assertThatSectionWasToldItLostItsLease(Future<String> section) throws Exception {
        try {
            section.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS);
            throw new AssertionError("the section on a lease of a closed engine returned normally");
        }
        catch (java.util.concurrent.ExecutionException ex) {
            assertThat(ex.getCause()).isInstanceOf(LeaseLostException.class)
                    .hasMessageContaining("lease engine was closed");
        }
    }
}
