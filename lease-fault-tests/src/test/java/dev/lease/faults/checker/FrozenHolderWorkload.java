package dev.lease.faults.checker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.lease.faults.checker.History.Kind;
import dev.lease.faults.checker.History.Op;
import dev.lease.faults.checker.History.Outcome;
import dev.lease.faults.workload.Ledger;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

/**
 * Workers that loop acquire → write(token) → release straight on a backend, without renewal: a worker that
 * "pauses" is exactly a frozen process, whose grant expires on the store while it sleeps, and who then writes
 * with its old token.
 */
final class FrozenHolderWorkload {

    record Config(int workers, int cycles, Duration ttl, double pauseProbability, Duration pause, long seed) {
    }

    private FrozenHolderWorkload() {
    }

    static History run(LeaseBackend<?> backend, String name, Ledger ledger, Config config) throws Exception {
        History history = History.withoutEngine();
        ExecutorService pool = Executors.newFixedThreadPool(config.workers());
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int w = 0; w < config.workers(); w++) {
                int worker = w;
                Random random = new Random(config.seed() * 31 + w);
                futures.add(pool.submit(() -> {
                    for (int c = 0; c < config.cycles(); c++) {
                        cycle(backend, name, ledger, config, history, worker, random);
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get(10, TimeUnit.MINUTES);
            }
        }
        finally {
            pool.shutdownNow();
        }
        return history;
    }

    private static <G extends Grant> void cycle(LeaseBackend<G> backend, String name, Ledger ledger, Config config,
            History history, int worker, Random random) throws Exception {
        Op acquire = history.invoke(worker, Kind.ACQUIRE);
        Optional<G> grant = Optional.empty();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (grant.isEmpty() && System.nanoTime() < deadline) {
            grant = backend.tryAcquire(new GrantRequest(name, config.ttl(), reason -> { }));
            if (grant.isEmpty()) {
                backend.awaitRelease(name, Duration.ofMillis(20 + random.nextInt(30)));
            }
        }
        if (grant.isEmpty()) {
            history.complete(acquire, Outcome.FAIL, -1, "busy for 30 s");
            return;
        }
        long token = grant.get().token().orElse(0);
        history.complete(acquire, Outcome.OK, token, null);
        if (random.nextDouble() < config.pauseProbability()) {
            Thread.sleep(config.pause().toMillis());
        }
        Op write = history.invoke(worker, Kind.WRITE);
        try {
            boolean accepted = ledger.write(token, write.id);
            history.complete(write, accepted ? Outcome.OK : Outcome.FAIL, token, accepted ? null : "fence refused");
        }
        catch (RuntimeException ex) {
            history.complete(write, Outcome.UNKNOWN, token, ex.toString());
        }
        Op release = history.invoke(worker, Kind.RELEASE);
        backend.release(grant.get());
        history.complete(release, Outcome.OK, token, null);
    }
}
