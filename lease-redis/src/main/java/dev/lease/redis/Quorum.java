package dev.lease.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The answers of the nodes of a Redlock to one call, counted as they arrive: decided once a majority said yes, or so
 * many said no or did not answer that a majority can no longer say yes, or every node answered.
 */
final class Quorum {

    private final int nodes;
    private final int majority;
    private int yes;
    private int no;
    private final List<String> failures = new ArrayList<>();

    Quorum(int nodes) {
        this.nodes = nodes;
        this.majority = nodes / 2 + 1;
    }

    /**
     * Counts {@code answer} of {@code node} when it arrives: its value says yes or no, an error is a failure.
     *
     * @return the answer once this quorum has counted it: a second quorum that counts that instead of {@code answer}
     *         never sees a node's answer before this one does (callbacks on one future run in no promised order)
     */
    <T> CompletableFuture<T> count(String node, CompletableFuture<T> answer, Predicate<T> isYes) {
        return answer.whenComplete((value, error) -> {
            synchronized (this) {
                if (error != null) {
                    Throwable cause = error instanceof CompletionException && error.getCause() != null
                            ? error.getCause() : error;
                    failures.add(node + " (" + (cause.getMessage() != null ? cause.getMessage() : cause) + ")");
                }
                else if (isYes.test(value)) {
                    yes++;
                }
                else {
                    no++;
                }
                notifyAll();
            }
        });
    }

    /**
     * Waits until decided or {@code deadline} ({@link System#nanoTime()}) passed.
     *
     * @return whether a majority said yes
     */
    synchronized boolean await(long deadline) throws InterruptedException {
        while (!decided()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return yes >= majority;
    }

    synchronized int yes() {
        return yes;
    }

    /** How many nodes answered at all, yes or no. */
    synchronized int answered() {
        return yes + no;
    }

    int majority() {
        return majority;
    }

    /** Who failed and how, and how many have not answered yet, for messages. */
    synchronized String describe() {
        int silent = nodes - yes - no - failures.size();
        return yes + " of " + nodes + " nodes said yes, " + no + " no"
                + (failures.isEmpty() ? "" : ", failed: " + String.join(", ", failures))
                + (silent == 0 ? "" : yes >= majority ? ", " + silent + " not waited for (a majority had said yes)"
                        : stoppedEarly() ? ", " + silent + " not waited for (a majority could no longer say yes)"
                                : ", " + silent + " did not answer in time");
    }

    /** Whether waiting ended before the deadline because enough nodes said no or failed that no majority could say yes. */
    synchronized boolean stoppedEarly() {
        return nodes - no - failures.size() < majority;
    }

    private boolean decided() {
        return yes >= majority || nodes - no - failures.size() < majority || yes + no + failures.size() == nodes;
    }
}
