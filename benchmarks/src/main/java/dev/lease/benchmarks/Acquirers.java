package dev.lease.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/** Takes many leases or locks on a few threads at once, as the hold comparisons do. */
final class Acquirers {

    /** One acquisition. */
    @FunctionalInterface
    interface Task {
        void acquire(int i) throws Exception;
    }

    private Acquirers() {
    }

    /**
     * Runs {@code task} for every i below {@code count}, spread over {@code threads} threads; a thread stops at its first
     * failure.
     *
     * @return the first failure, or null
     */
    static Throwable run(int count, int threads, Task task) throws InterruptedException {
        AtomicReference<Throwable> error = new AtomicReference<>();
        List<Thread> acquirers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int first = t;
            Thread thread = new Thread(() -> {
                try {
                    for (int i = first; i < count; i += threads) {
                        task.acquire(i);
                    }
                }
                catch (Throwable ex) {
                    error.compareAndSet(null, ex);
                }
            });
            thread.start();
            acquirers.add(thread);
        }
        for (Thread thread : acquirers) {
            thread.join();
        }
        return error.get();
    }
}
