package dev.lease.samples.quickstart;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.springframework.boot.CommandLineRunner;
import org.springframework.stereotype.Component;

import dev.lease.LeaseLostException;
import dev.lease.memory.InMemoryLeaseBackend;

/** Shows the three behaviours of a lease in a few seconds: exclusion with tokens, skipping, loss. */
@Component
class Demo implements CommandLineRunner {

    private final ReportJob job;
    private final BatchImport batchImport;
    private final InMemoryLeaseBackend backend;

    Demo(ReportJob job, BatchImport batchImport, InMemoryLeaseBackend backend) {
        this.job = job;
        this.batchImport = batchImport;
        this.backend = backend;
    }

    @Override
    public void run(String... args) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Long>> reports = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                reports.add(pool.submit(() -> job.generate("2026-12-02")));
            }
            for (Future<Long> report : reports) {
                report.get(30, TimeUnit.SECONDS);
            }
            List<Future<?>> cleanups = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                cleanups.add(pool.submit(() -> {
                    job.cleanup();
                    return null;
                }));
            }
            for (Future<?> cleanup : cleanups) {
                cleanup.get(30, TimeUnit.SECONDS);
            }
            Future<String> longWork = pool.submit(job::longWork);
            job.awaitLongWorkStarted();
            backend.revoke("long-work"); // as if an operator or a network partition took the lease away
            try {
                longWork.get(30, TimeUnit.SECONDS);
            }
            catch (ExecutionException ex) {
                if (ex.getCause() instanceof LeaseLostException lost) {
                    job.log().add("caller got LeaseLostException: " + lost.getMessage());
                }
            }
        }
        finally {
            pool.shutdownNow();
        }
        job.log().add("imported " + batchImport.importAll(List.of("2026-11", "2026-12")) + " batches: "
                + batchImport.written());
        job.log().add(batchImport.nightlyReport());
        job.log().forEach(line -> System.out.println("  " + line));
    }
}
