package dev.lease.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * A Redlock renewal counts every node's answer twice: once for "did a majority answer at all" and once per grant. The
 * grants' quorums count what the first quorum returns, so that they can never be decided on an answer the first has
 * not counted yet (in a clean-clone run of .ci/run, a lost grant failed a whole batch as "2 of 5 nodes said yes, 3
 * did not answer" while three had answered).
 */
class QuorumTest {

    @Test
    void aQuorumCountingWhatAnotherReturnsHearsEachAnswerAfterIt() throws Exception {
        int nodes = 5;
        Quorum reached = new Quorum(nodes);
        Quorum grant = new Quorum(nodes);
        List<Integer> reachedWhenTheGrantHeard = new ArrayList<>();
        List<CompletableFuture<Boolean>> answers = new ArrayList<>();
        for (int i = 0; i < nodes; i++) {
            CompletableFuture<Boolean> answer = new CompletableFuture<>();
            answers.add(answer);
            grant.count("node-" + i, reached.count("node-" + i, answer, any -> true), yes -> {
                synchronized (reachedWhenTheGrantHeard) {
                    reachedWhenTheGrantHeard.add(reached.answered());
                }
                return yes;
            });
        }
        // Answers complete on other threads, as Lettuce's event loops complete them.
        ExecutorService eventLoops = Executors.newFixedThreadPool(nodes);
        try {
            for (CompletableFuture<Boolean> answer : answers) {
                eventLoops.execute(() -> answer.complete(true));
            }
            assertThat(grant.await(System.nanoTime() + TimeUnit.SECONDS.toNanos(30))).isTrue();
            // Decided at the third yes: by then the first quorum has counted at least three answers.
            assertThat(reached.answered()).isGreaterThanOrEqualTo(grant.majority());
        }
        finally {
            eventLoops.shutdown();
            assertThat(eventLoops.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
        }
        synchronized (reachedWhenTheGrantHeard) {
            assertThat(reachedWhenTheGrantHeard).hasSize(nodes);
            for (int i = 0; i < nodes; i++) {
                assertThat(reachedWhenTheGrantHeard.get(i)).as("answers the first quorum had counted when the second "
                        + "heard its answer number %d", i + 1).isGreaterThanOrEqualTo(i + 1);
            }
        }
    }

    @Test
    void aFailureReachesTheSecondQuorumWithItsOwnMessage() {
        Quorum reached = new Quorum(3);
        Quorum grant = new Quorum(3);
        CompletableFuture<Boolean> answer = new CompletableFuture<>();
        grant.count("node-0", reached.count("node-0", answer, any -> true), yes -> yes);

        answer.completeExceptionally(new IllegalStateException("connection refused"));

        assertThat(reached.describe()).contains("failed: node-0 (connection refused)");
        assertThat(grant.describe()).contains("failed: node-0 (connection refused)");
    }

    /**
     * Issue 44: two of three nodes failed, so no majority can say yes and the wait stops at once; the third, live node
     * was not waited for, which the message must not call "did not answer in time".
     */
    @Test
    void aNodeNotWaitedForIsNotSaidToBeLate() throws Exception {
        Quorum grant = new Quorum(3);
        CompletableFuture<Boolean> refused = CompletableFuture.failedFuture(new IllegalStateException("refused"));
        grant.count("node-0", refused, y -> y);
        grant.count("node-1", refused, y -> y);
        grant.count("node-2", new CompletableFuture<Boolean>(), y -> y);

        assertThat(grant.await(System.nanoTime() + TimeUnit.HOURS.toNanos(1))).isFalse();
        assertThat(grant.describe()).contains("1 not waited for (a majority could no longer say yes)")
                .doesNotContain("in time");
    }
}
