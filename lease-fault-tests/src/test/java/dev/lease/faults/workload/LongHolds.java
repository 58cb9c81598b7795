package dev.lease.faults.workload;

import java.time.Duration;
import java.util.Map;
import java.util.Random;

/**
 * Makes some holds outlast the lease's ttl: before a write, with probability {@code percent}%, the holder works on
 * for a random time between {@code min} and {@code max}. Only renewal carries such a hold through; when a fault
 * stops the renewal the engine must interrupt the holder here, before it writes with a token whose lease expired.
 */
public final class LongHolds implements LeaseWorker.BeforeWrite {

    private final int percent;
    private final Duration min;
    private final Duration max;
    private final Random random;

    public LongHolds(int percent, Duration min, Duration max, long seed) {
        this.percent = percent;
        this.min = min;
        this.max = max;
        this.random = new Random(seed);
    }

    /** From a child's arguments {@code long-hold-percent}, {@code long-hold-min-ms}, {@code long-hold-max-ms}. */
    static LongHolds of(Map<String, String> args) {
        return new LongHolds(Integer.parseInt(args.getOrDefault("long-hold-percent", "0")),
                Duration.ofMillis(Long.parseLong(args.getOrDefault("long-hold-min-ms", "0"))),
                Duration.ofMillis(Long.parseLong(args.getOrDefault("long-hold-max-ms", "0"))),
                Long.parseLong(args.getOrDefault("seed", "0")) * 7919 + 17);
    }

    @Override
    public void beforeWrite(long token) throws InterruptedException {
        if (random.nextInt(100) < percent) {
            long span = Math.max(0, max.toMillis() - min.toMillis());
            Thread.sleep(min.toMillis() + (long) (random.nextDouble() * span));
        }
    }
}
