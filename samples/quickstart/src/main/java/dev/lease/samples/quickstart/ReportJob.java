package dev.lease.samples.quickstart;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.springframework.stereotype.Service;

import dev.lease.FencingToken;
import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.WhenBusy;

/** Leased methods of the quickstart, referenced by the README. */
@Service
public class ReportJob {

    private final List<String> log = new CopyOnWriteArrayList<>();
    private final CountDownLatch longWorkStarted = new CountDownLatch(1);

    /** Several callers at once: the lease serialises them, and each grant carries a higher token. */
    @Leased(name = "report-#{#day}", kind = LeaseKind.CORRECTNESS, waitFor = "10s")
    public long generate(String day) throws InterruptedException {
        FencingToken token = LeaseContext.token();
        log.add(Thread.currentThread().getName() + " holds " + token);
        Thread.sleep(50); // stands for the real work; a lost lease interrupts it here
        return token.value();
    }

    /** A job that only one instance needs to run: the others skip instead of queueing. */
    @Leased(name = "cleanup", kind = LeaseKind.EFFICIENCY, whenBusy = WhenBusy.SKIP)
    public void cleanup() throws InterruptedException {
        log.add(Thread.currentThread().getName() + " cleans up");
        Thread.sleep(200);
    }

    /** Long work that will see its lease taken away. */
    @Leased(name = "long-work", kind = LeaseKind.CORRECTNESS, ttl = "1s")
    public String longWork() throws InterruptedException {
        log.add(Thread.currentThread().getName() + " starts long work with " + LeaseContext.token());
        longWorkStarted.countDown();
        Thread.sleep(60_000);
        return "finished";
    }

    /** Blocks until {@link #longWork()} holds its lease. */
    public void awaitLongWorkStarted() throws InterruptedException {
        if (!longWorkStarted.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("long work did not start");
        }
    }

    /** What happened, in order. */
    public List<String> log() {
        return log;
    }
}
