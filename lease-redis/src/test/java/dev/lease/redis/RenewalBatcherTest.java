package dev.lease.redis;

import static dev.lease.testing.TestTiming.millis;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The batcher on its own, with a renewer that answers per grant: the wide window makes coalescing certain, so a
 * batcher that sent one request per caller, or mixed up the answers, fails here.
 */
class RenewalBatcherTest {

    private final ExecutorService pool = Executors.newFixedThreadPool(12);

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    @Test
    void concurrentRenewalsShareOneRequestAndEachCallerGetsItsOwnAnswer() throws Exception {
        List<List<RedisGrant>> requests = Collections.synchronizedList(new ArrayList<>());
        RenewalBatcher batcher = new RenewalBatcher(grants -> {
            requests.add(grants);
            boolean[] answers = new boolean[grants.size()];
            for (int i = 0; i < answers.length; i++) {
                answers[i] = grants.get(i).owner().startsWith("ours");
            }
            return answers;
        }, millis(300), 100);
        int callers = 12;
        CyclicBarrier start = new CyclicBarrier(callers);
        List<Future<Boolean>> answers = new ArrayList<>();
        for (int i = 0; i < callers; i++) {
            RedisGrant grant = grant(i, i % 3 == 0 ? "theirs-" + i : "ours-" + i);
            answers.add(pool.submit(() -> {
                start.await();
                return batcher.renew(grant);
            }));
        }
        for (int i = 0; i < callers; i++) {
            assertThat(answers.get(i).get(seconds(10).toMillis(), TimeUnit.MILLISECONDS))
                    .as("answer of caller %d", i).isEqualTo(i % 3 != 0);
        }
        assertThat(requests.stream().mapToInt(List::size).sum()).as("grants sent").isEqualTo(callers);
        assertThat(requests.size()).as("requests for %d concurrent renewals", callers).isLessThan(callers);
    }

    /**
     * Without a window, a lone renewal goes out at once, and renewals arriving while it travels gather into the next
     * request instead of each sending its own: a few renewal threads are then not capped by a fixed pause per batch.
     */
    @Test
    void renewalsGatherWhileARequestIsInFlight() throws Exception {
        List<List<RedisGrant>> requests = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch firstSent = new CountDownLatch(1);
        CountDownLatch answerFirst = new CountDownLatch(1);
        RenewalBatcher batcher = new RenewalBatcher(grants -> {
            requests.add(grants);
            firstSent.countDown();
            try {
                answerFirst.await(seconds(10).toMillis(), TimeUnit.MILLISECONDS);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            boolean[] answers = new boolean[grants.size()];
            java.util.Arrays.fill(answers, true);
            return answers;
        }, Duration.ZERO, 100);
        Future<Boolean> first = pool.submit(() -> batcher.renew(grant(0, "ours-0")));
        assertThat(firstSent.await(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).as("lone renewal sent at once")
                .isTrue();
        List<Future<Boolean>> later = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            RedisGrant grant = grant(i, "ours-" + i);
            later.add(pool.submit(() -> batcher.renew(grant)));
        }
        org.awaitility.Awaitility.await().atMost(seconds(10)).pollInterval(Duration.ofMillis(10))
                .until(() -> batcher.openBatchSize() == 5);
        answerFirst.countDown();
        assertThat(first.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        for (Future<Boolean> answer : later) {
            assertThat(answer.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        }
        assertThat(requests).extracting(List::size).containsExactly(1, 5);
    }

    @Test
    void aFailedRequestFailsEveryCallerOfItsBatch() throws Exception {
        RenewalBatcher batcher = new RenewalBatcher(grants -> {
            throw new IllegalStateException("connection refused");
        }, millis(200), 100);
        CyclicBarrier start = new CyclicBarrier(4);
        List<Future<Boolean>> answers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            RedisGrant grant = grant(i, "ours-" + i);
            answers.add(pool.submit(() -> {
                start.await();
                return batcher.renew(grant);
            }));
        }
        for (Future<Boolean> answer : answers) {
            assertThatThrownBy(() -> answer.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class).cause().hasMessageContaining("connection refused");
        }
    }

    @Test
    void anInterruptedLeaderStillSendsTheBatchForTheOthers() throws Exception {
        CountDownLatch leaderIn = new CountDownLatch(1);
        List<Boolean> interruptedDuringRequest = Collections.synchronizedList(new ArrayList<>());
        RenewalBatcher batcher = new RenewalBatcher(grants -> {
            interruptedDuringRequest.add(Thread.currentThread().isInterrupted());
            boolean[] answers = new boolean[grants.size()];
            java.util.Arrays.fill(answers, true);
            return answers;
        }, seconds(30), 100);
        Future<Boolean> leader = pool.submit(() -> {
            leaderIn.countDown();
            return batcher.renew(grant(0, "ours-0"));
        });
        assertThat(leaderIn.await(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        // The follower joins the leader's open batch (the window is far longer than this test).
        Future<Boolean> follower = pool.submit(() -> batcher.renew(grant(1, "ours-1")));
        awaitJoined(batcher);
        leader.cancel(true);
        assertThat(follower.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(interruptedDuringRequest).containsExactly(false);
    }

    private static void awaitJoined(RenewalBatcher batcher) {
        org.awaitility.Awaitility.await().atMost(seconds(10)).pollInterval(Duration.ofMillis(10))
                .until(() -> batcher.openBatchSize() == 2);
    }

    private static RedisGrant grant(int i, String owner) {
        return new RedisGrant("lease-" + i, "lease:lease-" + i, owner, 1000);
    }
}
