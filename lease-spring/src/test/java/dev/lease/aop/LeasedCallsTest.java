package dev.lease.aop;

import static dev.lease.testing.TestTiming.millis;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

class LeasedCallsTest {

    private final LeasedCalls calls = new LeasedCalls();

    @Test
    void closingWaitsForTheCallsInProgressAndRefusesNewOnesButNotNestedOnes() throws Exception {
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        CompletableFuture<Boolean> nestedAdmitted = CompletableFuture.supplyAsync(() -> {
            assertThat(calls.enter()).isTrue();
            try {
                inside.countDown();
                finish.await(seconds(10).toMillis(), TimeUnit.MILLISECONDS);
                boolean nested = calls.enter();
                calls.exit();
                return nested;
            }
            catch (InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
            finally {
                calls.exit();
            }
        });
        assertThat(inside.await(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).isTrue();

        CompletableFuture<Boolean> closed = CompletableFuture.supplyAsync(() -> {
            try {
                return calls.closeAndAwait(seconds(10));
            }
            catch (InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
        });
        await().atMost(seconds(10)).until(this::refused);
        assertThat(closed).as("closing while a call runs").isNotDone();

        finish.countDown();
        assertThat(nestedAdmitted.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).as("nested call admitted").isTrue();
        assertThat(closed.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).as("all calls ended").isTrue();
        assertThat(calls.running()).isZero();
    }

    /** An application's template and the engine it wraps are both destroyed: only the first one waits. */
    @Test
    void closingASecondTimeDoesNotWaitAgain() throws Exception {
        assertThat(calls.enter()).isTrue();
        assertThat(calls.closeAndAwait(millis(50))).as("a call still runs").isFalse();
        assertThat(CompletableFuture.supplyAsync(() -> {
            try {
                return calls.closeAndAwait(seconds(60));
            }
            catch (InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
        }).get(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).as("second close, at once").isTrue();
        calls.exit();
    }

    @Test
    void closingGivesUpAfterTheBound() throws Exception {
        assertThat(calls.enter()).isTrue();
        assertThat(calls.closeAndAwait(millis(50))).isFalse();
        calls.exit();
        assertThat(calls.running()).isZero();
    }

    private boolean refused() {
        if (calls.enter()) {
            calls.exit();
            return false;
        }
        return true;
    }
}
