package dev.lease.benchmarks;

/** One contender of a comparison: a locker per simulated instance (two), the first used when uncontended. */
record Contender(String name, Locker first, Locker second, Runnable leasedOp) {

    static Contender of(String name, Locker first, Locker second) {
        return new Contender(name, first, second, null);
    }
}
