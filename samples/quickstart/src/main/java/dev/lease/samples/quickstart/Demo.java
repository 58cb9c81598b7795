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

/** Shows the behaviours of a lease in a few seconds: exclusion with tokens, skipping, a fenced write, loss. */
@Component
class Demo implements CommandLineRunner {

    private final ReportJob job;
    private final BatchImport batchImport;
    private final Accounts accounts;
    private final InMemoryLeaseBackend backend;

    Demo(ReportJob job, BatchImport batchImport, Accounts accounts, InMemoryLeaseBackend backend) {
        this.job = job;
        this.batchImport = batchImport;
        this.accounts = accounts;
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
            // Ten concurrent read-modify-write deposits: the lease serialises them, so none is lost.
            List<Future<?>> deposits = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                deposits.add(pool.submit(() -> {
                    accounts.deposit(1, 100);
                    return null;
                }));
            }
            for (Future<?> deposit : deposits) {
                deposit.get(30, TimeUnit.SECONDS);
            }
            job.log().add("account 1 balance after 10 concurrent deposits of 100: " + accounts.balance(1));
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
