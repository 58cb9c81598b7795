package dev.lease.benchmarks;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.lease.memory.InMemoryLeaseBackend;

/**
 * The interceptor-overhead rows ({@code --only=overhead}): a {@code @Leased} call against a {@code LeaseTemplate}
 * acquire+close and a plain call, on the in-memory backend, so that only the library's own cost shows.
 */
final class InterceptorOverhead {

    private final Benchmarks harness;
    private final Benchmarks.Settings settings;

    InterceptorOverhead(Benchmarks harness, Benchmarks.Settings settings) {
        this.harness = harness;
        this.settings = settings;
    }

    void run() throws Exception {
        InMemoryLeaseBackend backend = new InMemoryLeaseBackend();
        Ours ours = harness.own(new Ours(backend));
        Runnable leased = ours.leased("overhead");
        LeasedService.Plain plain = new LeasedService.Plain();
        Locker template = ours.template();
        List<Contender> contenders = List.of(
                new Contender("LeaseTemplate acquire+close (in-memory)", null, null, () -> {
                    try {
                        template.acquire("overhead-template").close();
                    }
                    catch (Exception ex) {
                        throw new IllegalStateException(ex);
                    }
                }),
                new Contender("@Leased call (in-memory)", null, null, leased),
                new Contender("plain call, no lease", null, null, () -> plain.work("overhead")));
        Benchmarks.Settings s = settings;
        Map<Contender, Stats> stats = new LinkedHashMap<>();
        contenders.forEach(c -> stats.put(c, new Stats()));
        int batch = s.overheadBatch();
        for (Contender c : contenders) {
            for (int i = 0; i < batch; i++) {
                c.leasedOp().run();
            }
        }
        for (int round = 0; round < s.rounds(); round++) {
            for (int k = 0; k < contenders.size(); k++) {
                Contender c = contenders.get((k + round) % contenders.size());
                long begin = System.nanoTime();
                for (int i = 0; i < batch; i++) {
                    c.leasedOp().run();
                }
                stats.get(c).add((System.nanoTime() - begin) / 1000.0 / batch);
            }
        }
        harness.addRows("Interceptor overhead (in-memory backend)", "µs per call", contenders, stats, Map.of());
    }
}
